"""HTTPS through the pinned connection: TLS still verifies the certificate against the name."""

import datetime
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pytest_httpserver import HTTPServer

from servers.outbound import OutboundError, guarded_request, transport


def _certificate(tmp_path, name: str):
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def tls_server(tmp_path, monkeypatch):
    cert_path, key_path = _certificate(tmp_path, "api.example.test")
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_path, key_path)
    client_context = ssl.create_default_context(cafile=str(cert_path))
    # The client trusts this test certificate (and nothing else) instead of the public CAs.
    monkeypatch.setattr(transport, "shared_ssl_context", lambda: client_context)
    server = HTTPServer(host="127.0.0.1", ssl_context=server_context)
    server.start()
    yield server
    server.clear()
    server.stop()


async def test_https_to_a_pinned_address_verifies_the_certificate_for_the_name(
    tls_server, fake_dns, allow_loopback
):
    fake_dns.table["api.example.test"] = ["127.0.0.1"]
    tls_server.expect_request("/secure").respond_with_data("over tls")
    response = await guarded_request("GET", f"https://api.example.test:{tls_server.port}/secure")
    assert response.text == "over tls"
    assert response.connected_to == [("api.example.test", "127.0.0.1")]
    request, _ = tls_server.log[0]
    assert request.headers["Host"] == f"api.example.test:{tls_server.port}"


async def test_a_certificate_for_another_name_is_refused(tls_server, fake_dns, allow_loopback):
    fake_dns.table["impostor.example.test"] = ["127.0.0.1"]
    with pytest.raises(OutboundError, match="TLS certificate could not be verified"):
        await guarded_request("GET", f"https://impostor.example.test:{tls_server.port}/")
