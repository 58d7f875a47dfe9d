import copy

import pytest
import yaml

from integrations.importers import ImportFailed, parse_openapi
from servers.kinds import http


@pytest.fixture
def petstore(data):
    return parse_openapi(data / "petstore-3.0.yaml")


@pytest.fixture
def clinic(data):
    return parse_openapi(
        data / "petstore-3.1.json", base_url="https://clinic.example.net/docs/openapi.json"
    )


@pytest.fixture
def bookshelf(data):
    return parse_openapi(data / "bookshelf-swagger-2.0.json")


def test_it_previews_every_operation_of_the_petstore_3_0_spec(petstore):
    assert petstore.format == "openapi-3.0"
    assert (petstore.title, petstore.version) == ("Petstore", "2.4.0")
    assert [op.name for op in petstore.operations] == [
        "listPets",
        "createPet",
        "getPetById",
        "updatePetWithForm",
        "deletePet",
        "post_pets_by_pet_id_photos",
        "placeOrder",
        "getInventory",
    ]
    get_pet = petstore.find("getPetById")
    assert get_pet.source == "GET /pets/{petId}"
    assert get_pet.title == "Find a pet by id"
    assert get_pet.annotations["readOnlyHint"] is True
    assert petstore.find("deletePet").annotations["destructiveHint"] is True
    assert petstore.find("deletePet").description == "Delete a pet\n\nRemoves the pet for good."


def test_server_variables_are_replaced_by_their_defaults(petstore):
    assert petstore.base_url == "https://eu.petshop.example/v2"
    assert petstore.find("getPetById").config["url"] == "https://eu.petshop.example/v2/pets/{petId}"


def test_parameters_of_every_location_are_mapped(petstore):
    list_pets = petstore.find("listPets")
    assert list_pets.config["parameters"] == {
        "limit": "query",
        "status": "query",
        "X-Request-ID": "header",
    }
    # The spec says Accept, Content-Type and Authorization header parameters are ignored.
    assert "Accept" not in list_pets.input_schema["properties"]
    assert list_pets.input_schema["properties"]["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "default": 20,
        "description": "How many pets to return at most.",
    }
    # Path-level parameters reach every operation of the path, and are required.
    get_pet = petstore.find("getPetById")
    assert get_pet.config["parameters"] == {"petId": "path"}
    assert get_pet.input_schema["required"] == ["petId"]
    # Cookies are not something the http kind sends: said, not silently dropped.
    delete = petstore.find("deletePet")
    assert any("cookie parameter 'reason'" in p for p in delete.problems)


def test_json_bodies_become_arguments_with_local_refs_resolved(petstore):
    create = petstore.find("createPet")
    assert create.config["bodyType"] == "json"
    assert create.config["parameters"] == {
        "name": "body",
        "tag": "body",
        "status": "body",
        "category": "body",
    }
    props = create.input_schema["properties"]
    assert props["status"] == {"type": "string", "enum": ["available", "pending", "sold"]}
    assert props["tag"] == {"type": ["string", "null"]}  # 3.0 nullable -> JSON Schema null
    assert props["name"] == {"type": "string", "examples": ["Rex"]}
    assert create.input_schema["required"] == ["name"]
    # A schema that contains itself is kept once under $defs instead of being unrolled forever.
    assert props["category"]["properties"]["parent"] == {"$ref": "#/$defs/Category"}
    assert create.input_schema["$defs"]["Category"]["properties"]["parent"] == {
        "$ref": "#/$defs/Category"
    }
    assert any("application/xml not used" in p for p in create.problems)


def test_form_and_multipart_bodies_map_to_form_fields(petstore):
    form = petstore.find("updatePetWithForm")
    assert form.config["bodyType"] == "form"
    assert form.config["parameters"] == {"petId": "path", "name": "form", "status": "form"}
    assert form.input_schema["required"] == ["petId"]  # the body itself is optional
    upload = petstore.find("post_pets_by_pet_id_photos")
    assert upload.config["bodyType"] == "multipart"
    assert upload.config["parameters"] == {
        "petId": "path",
        "caption": "multipart",
        "file": {"in": "multipart", "filename": "file"},
    }


def test_read_only_properties_are_not_asked_for(data):
    document = yaml.safe_load((data / "petstore-3.0.yaml").read_text())
    document["paths"]["/pets"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "$ref": "#/components/schemas/Pet"
    }
    create = parse_openapi(document).find("createPet")
    assert "id" not in create.input_schema["properties"]  # readOnly: the server assigns it
    assert set(create.input_schema["properties"]) == {"name", "tag", "status", "category"}


def test_security_schemes_become_auth_settings_with_secret_placeholders(petstore):
    assert petstore.secrets == ["PETSTORE_API_KEY"]
    assert petstore.find("getPetById").config["auth"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "value": "{{ secrets.PETSTORE_API_KEY }}",
    }
    # The operation's own requirement wins over the document's; its authorization-code
    # scheme is a connection the calling person makes, with the scopes the operation lists.
    [provider] = petstore.providers
    assert (provider["authorizationUrl"], provider["tokenUrl"]) == (
        "https://auth.petshop.example/authorize",
        "https://auth.petshop.example/token",
    )
    assert sorted(provider["scopes"]) == ["read:pets", "write:pets"]
    create = petstore.find("createPet").config
    assert "auth" not in create
    assert create["connection"] == {"provider": provider["key"], "scopes": ["write:pets"]}
    # `security: []` opts the operation out.
    assert "auth" not in petstore.find("getInventory").config
    assert "connection" not in petstore.find("getInventory").config
    assert not any("oauth2 flows are not run" in p for p in petstore.problems)


def test_a_swagger_access_code_flow_proposes_a_provider_too():
    document = {
        "swagger": "2.0",
        "info": {"title": "Notes", "version": "1"},
        "host": "api.notes.example",
        "schemes": ["https"],
        "securityDefinitions": {
            "notes_oauth": {
                "type": "oauth2",
                "flow": "accessCode",
                "authorizationUrl": "https://notes.example/oauth/authorize",
                "tokenUrl": "https://notes.example/oauth/token",
                "scopes": {"notes": "Read and write notes"},
            }
        },
        "paths": {
            "/notes": {
                "get": {
                    "operationId": "listNotes",
                    "security": [{"notes_oauth": ["notes"]}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    preview = parse_openapi(document)
    assert [p["key"] for p in preview.providers] == ["notes"]
    assert preview.find("listNotes").config["connection"] == {
        "provider": "notes",
        "scopes": ["notes"],
    }


def test_an_oauth2_flow_with_relative_endpoints_and_no_base_proposes_nothing():
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Rel", "version": "1"},
        "components": {
            "securitySchemes": {
                "o": {
                    "type": "oauth2",
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "/authorize",
                            "tokenUrl": "/token",
                            "scopes": {},
                        }
                    },
                }
            }
        },
        "security": [{"o": []}],
        "paths": {"/x": {"get": {"responses": {"200": {"description": "ok"}}}}},
    }
    preview = parse_openapi(document)
    assert preview.providers == []
    assert any("relative" in p for p in preview.problems)


def test_every_generated_config_is_valid_for_the_http_kind(petstore, clinic, bookshelf):
    for preview in (petstore, clinic, bookshelf):
        for op in preview.operations:
            assert http.validate_config(op.config) == [], (preview.title, op.name)
            assert not [p for p in op.problems if p.startswith("http config")]
            http.compile({"name": op.name, "config": op.config})


def test_openapi_3_1_relative_servers_path_item_refs_and_ref_siblings(clinic):
    assert clinic.format == "openapi-3.1"
    assert clinic.base_url == "https://clinic.example.net/clinic/v1"
    names = [op.name for op in clinic.operations]
    assert names == [
        "listVisits",
        "bookVisit",
        "getVisit",
        "cancelVisit",
        "put_vets_by_vet_id_notes",
        "get_reports_by_year",
    ]
    cancel = clinic.find("cancelVisit")  # from components.pathItems, with a ref'd parameter
    assert cancel.config["url"] == "https://clinic.example.net/clinic/v1/visits/{visitId}"
    assert cancel.config["parameters"] == {"visitId": "path", "notify": "query"}
    book = clinic.find("bookVisit")
    kind = book.input_schema["properties"]["kind"]
    assert kind["description"] == "What the visit is for."  # a sibling of $ref, kept in 3.1
    assert kind["enum"] == ["checkup", "vaccination", "surgery"]
    assert "id" not in book.input_schema["properties"]  # readOnly
    assert book.input_schema["properties"]["reason"]["type"] == ["string", "null"]


def test_a_non_object_body_is_one_body_argument_sent_whole(clinic):
    notes = clinic.find("put_vets_by_vet_id_notes")
    assert notes.config["body"] == "{{ body }}"
    assert notes.config["parameters"] == {"vetId": "path", "If-Match": "header"}
    assert notes.input_schema["properties"]["body"]["type"] == "array"
    assert set(notes.input_schema["required"]) == {"vetId", "If-Match", "body"}
    assert notes.config["auth"]["type"] == "basic"


def test_undeclared_path_parameters_are_added_and_reported(clinic):
    report = clinic.find("get_reports_by_year")
    assert report.config["parameters"] == {"year": "path"}
    assert any("'year' is not declared" in p for p in report.problems)


def test_swagger_2_0_host_body_form_and_security(bookshelf):
    assert bookshelf.format == "swagger-2.0"
    assert bookshelf.base_url == "https://library.example.org/api"
    search = bookshelf.find("searchBooks")
    assert search.config["auth"] == {
        "type": "apiKey",
        "in": "query",
        "name": "api_key",
        "value": "{{ secrets.BOOKSHELF_API_KEY_QUERY }}",
    }
    assert search.input_schema["properties"]["pageSize"] == {
        "type": "integer",
        "default": 25,
        "exclusiveMaximum": 200,  # draft-4 boolean form turned into the 2020-12 number
    }
    add = bookshelf.find("addBook")
    assert add.config["parameters"]["title"] == "body"
    assert add.input_schema["properties"]["subtitle"]["type"] == ["string", "null"]
    assert "addedAt" not in add.input_schema["properties"]
    assert add.config["auth"]["type"] == "basic"
    lend = bookshelf.find("lendBook")
    assert lend.config["bodyType"] == "form"
    assert lend.input_schema["required"] == ["isbn", "memberId"]
    cover = bookshelf.find("uploadCover")
    assert cover.config["bodyType"] == "multipart"
    assert cover.config["parameters"]["image"] == {"in": "multipart", "filename": "image"}


def test_oauth2_client_credentials_become_an_oauth2_auth_setting():
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Ledger", "version": "1"},
        "servers": [{"url": "https://ledger.example.com"}],
        "security": [{"machine": []}],
        "paths": {
            "/entries": {
                "get": {"operationId": "entries", "responses": {"200": {"description": "ok"}}}
            }
        },
        "components": {
            "securitySchemes": {
                "machine": {
                    "type": "oauth2",
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://ledger.example.com/oauth/token",
                            "scopes": {"entries:read": "read"},
                        }
                    },
                }
            }
        },
    }
    preview = parse_openapi(document)
    assert preview.find("entries").config["auth"] == {
        "type": "oauth2",
        "tokenUrl": "https://ledger.example.com/oauth/token",
        "clientId": "{{ secrets.LEDGER_MACHINE_CLIENT_ID }}",
        "clientSecret": "{{ secrets.LEDGER_MACHINE_CLIENT_SECRET }}",
        "scope": "entries:read",
    }
    assert http.validate_config(preview.find("entries").config) == []


def test_external_refs_are_not_followed_and_are_reported():
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Remote refs", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/things": {
                "post": {
                    "operationId": "makeThing",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "owner": {
                                            "$ref": "https://evil.example/schemas.json#/Owner"
                                        },
                                        "size": {"type": "integer"},
                                    },
                                }
                            }
                        }
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    op = parse_openapi(document).find("makeThing")
    assert op.input_schema["properties"]["size"] == {"type": "integer"}
    assert any("points outside this document" in p for p in op.problems)


def test_names_are_sanitised_and_unique():
    responses = {"200": {"description": "ok"}}
    long_id = "a" * 80
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Names", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/a": {"get": {"operationId": "get thing!", "responses": responses}},
            "/b": {"get": {"operationId": "get_thing", "responses": responses}},
            "/c": {"get": {"operationId": long_id, "responses": responses}},
        },
    }
    names = [op.name for op in parse_openapi(document).operations]
    assert names == ["get_thing", "get_thing_2", "a" * 64]


def test_it_refuses_what_it_cannot_import():
    with pytest.raises(ImportFailed, match="not an OpenAPI or Swagger document"):
        parse_openapi({"info": {"title": "x"}})
    with pytest.raises(ImportFailed, match="version '4.0.0' is not supported"):
        parse_openapi({"openapi": "4.0.0", "info": {}, "paths": {}})
    with pytest.raises(ImportFailed, match="no operations"):
        parse_openapi({"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "paths": {}})
    with pytest.raises(ImportFailed, match="not valid YAML or JSON"):
        parse_openapi("openapi: [unclosed")


def test_pasted_text_parses_like_a_file(data):
    text = (data / "petstore-3.0.yaml").read_text()
    from_text = parse_openapi(text)
    from_file = parse_openapi(data / "petstore-3.0.yaml")
    assert from_text.to_dict() == from_file.to_dict()


def test_a_relative_server_without_a_base_url_is_reported(data):
    import json

    document = json.loads((data / "petstore-3.1.json").read_text())
    preview = parse_openapi(copy.deepcopy(document))
    assert preview.base_url is None
    assert any("is relative" in p for p in preview.problems)
    assert preview.find("listVisits").config["url"] == "/visits"
    # A path under the server's baseUrl is still a config the http kind accepts.
    assert http.validate_config(preview.find("listVisits").config) == []


def test_list_serialisations_the_http_kind_does_not_make_are_reported(bookshelf):
    search = bookshelf.find("searchBooks")
    assert "parameter 'tags': a csv list upstream, sent as repeated values (tags=a&tags=b)" in (
        search.problems
    )
    document = {
        "openapi": "3.0.3",
        "info": {"title": "Styles", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/items": {
                "get": {
                    "operationId": "items",
                    "parameters": [
                        {
                            "name": "ids",
                            "in": "query",
                            "explode": False,
                            "schema": {"type": "array", "items": {"type": "integer"}},
                        },
                        {
                            "name": "filter",
                            "in": "query",
                            "style": "deepObject",
                            "schema": {"type": "object"},
                        },
                        {
                            "name": "tags",
                            "in": "query",
                            "schema": {"type": "array", "items": {"type": "string"}},
                        },
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    problems = parse_openapi(document).find("items").problems
    assert problems == [
        "parameter 'ids': a form, not exploded, list upstream, sent as repeated values (ids=a&ids=b)",
        "parameter 'filter': deepObject style (filter[key]=value) is sent as JSON text",
    ]


def test_yaml_dates_stay_strings_as_in_json(server):
    from integrations.importers import commit_import

    text = """
openapi: 3.0.3
info: {title: Dates, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /events:
    get:
      operationId: events
      parameters:
        - name: since
          in: query
          schema: {type: string, format: date, example: 2024-05-01}
      responses: {'200': {description: ok}}
"""
    preview = parse_openapi(text)
    assert preview.find("events").input_schema["properties"]["since"]["examples"] == ["2024-05-01"]
    (tool,) = commit_import(server, preview)
    tool.refresh_from_db()
    assert tool.input_schema["properties"]["since"]["examples"] == ["2024-05-01"]
