using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// The unmodified nats.js client (npm package <c>nats</c>, pinned in js/package.json) against the
/// server: each test runs one script from js/scripts with node. Install it first with
/// <c>npm ci --prefix tests/Courier.Integration.Tests/js</c>.
/// </summary>
public abstract class NatsJsTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsJsTests(TServer server)
    {
        _server = server;
    }

    private Task RunAsync(string script) => NodeScript.RunAsync(script, _server.Server);

    [Fact]
    public Task Client_connects_flushes_and_closes_cleanly() => RunAsync("connect_close");

    [Fact]
    public Task Client_publishes_and_subscribes_across_connections() => RunAsync("pub_sub");

    [Fact]
    public Task Client_wildcard_subscriptions_match_as_specified() => RunAsync("wildcards");

    [Fact]
    public Task Client_queue_group_gets_each_message_once_spread_over_members() => RunAsync("queue_groups");

    [Fact]
    public Task Client_request_gets_the_reply() => RunAsync("request_reply");

    [Fact]
    public Task Client_headers_are_sent_and_received() => RunAsync("headers");

    [Fact]
    public Task Client_request_to_nobody_fails_with_no_responders() => RunAsync("no_responders");

    [Fact]
    public Task Client_with_echo_off_does_not_get_its_own_messages() => RunAsync("echo_false");

    [Fact]
    public Task Client_round_trips_a_payload_of_exactly_max_payload() => RunAsync("max_payload");

    [Fact]
    public Task Client_receives_5000_messages_in_publish_order() => RunAsync("ordering");

    [Fact]
    public Task Client_auto_unsubscribe_stops_after_max_messages() => RunAsync("auto_unsubscribe");

    [Fact]
    public Task Client_drain_delivers_pending_messages_then_closes() => RunAsync("drain");

    [Fact]
    public async Task Client_authenticates_with_user_and_password()
    {
        await using var server = await _server.StartServerAsync("""
            authorization {
              user: jsuser
              password: jspass
            }
            """);
        await NodeScript.RunAsync("auth_user_password", server, new Dictionary<string, string>
        {
            ["NATS_USER"] = "jsuser",
            ["NATS_PASS"] = "jspass",
        });
    }

    [Fact]
    public async Task Client_authenticates_with_a_token()
    {
        await using var server = await _server.StartServerAsync("""
            authorization {
              token: "js-token"
            }
            """);
        await NodeScript.RunAsync("auth_token", server, new Dictionary<string, string> { ["NATS_TOKEN"] = "js-token" });
    }

    [Fact]
    public async Task Client_sees_permission_violations_and_keeps_its_connection()
    {
        await using var server = await _server.StartServerAsync("""
            authorization {
              users = [
                { user: jsuser, password: jspass, permissions: { publish: "allowed.>", subscribe: "allowed.>" } }
              ]
            }
            """);
        await NodeScript.RunAsync("permissions", server, new Dictionary<string, string>
        {
            ["NATS_USER"] = "jsuser",
            ["NATS_PASS"] = "jspass",
        });
    }
}

[Trait("server", "nats-server")]
public sealed class NatsJsTests_NatsServer(NatsServerFixture server) : NatsJsTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsJsTests_Courier(CourierFixture server) : NatsJsTests<CourierFixture>(server);
