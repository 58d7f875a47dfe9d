"""Views at their largest: a server whose every tool has the biggest custom HTML a view may have,
read over and over, answers quickly and leaves another tenant's pings fast (each read joins the
compiled halves around the process's one copy of the SDK; nothing is rendered per read)."""

from servers.views.spec import MAX_HTML

from .conftest import static_tool, under_attack

VIEWS = 20
READS = 40


def test_reading_the_largest_views_again_and_again_leaves_other_tenants_fast(attacker, victim):
    body = "<p>" + "x</script><!--" * ((MAX_HTML - 100) // 14) + "</p>"
    html = f"<!doctype html><html><head></head><body>{body}</body></html>"
    assert len(html) <= MAX_HTML
    tools = []
    for n in range(VIEWS):
        tool = static_tool(f"t{n}", "ok")
        tool["view"] = {"template": "html", "html": html, "csp": {"connectDomains": []}}
        tools.append(tool)
    tenant = attacker(tools=tools)
    listed = tenant.client.call("tools/list")["result"]["tools"]
    uris = [tool["_meta"]["ui"]["resourceUri"] for tool in listed]

    def attack():
        # The bodies are only counted here: parsing them would hold this test process's GIL and
        # slow the pinger thread, which is not what is measured.
        sizes = []
        for n in range(READS):
            message = {"jsonrpc": "2.0", "id": n, "method": "resources/read"}
            message["params"] = {"uri": uris[n % VIEWS]}
            response = tenant.client.post(message)
            assert response.status_code == 200
            sizes.append(len(response.content))
        return sizes

    sizes = under_attack(attack, victim, "largest views read again and again").answer
    assert len(sizes) == READS and min(sizes) > MAX_HTML
    one = tenant.client.call("resources/read", {"uri": uris[0]})["result"]["contents"][0]
    assert body in one["text"]
