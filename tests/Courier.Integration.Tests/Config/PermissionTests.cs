using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Config;

/// <summary>Per-user publish/subscribe permissions: violations get an -ERR and the connection stays open.</summary>
public abstract class PermissionTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        authorization {
          users = [
            { user: limited, password: pw, permissions: { publish: "allowed.>", subscribe: "allowed.>" } }
            { user: denier, password: pw, permissions: { publish: { deny: "secret.>" }, subscribe: { deny: ["secret.>"] } } }
            { user: admin, password: pw }
          ]
        }
        """;

    private readonly TServer _server;

    protected PermissionTests(TServer server)
    {
        _server = server;
    }

    private static async Task<WireClient> LoginAsync(ServerProcess server, string user)
    {
        var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync($"{{\"verbose\":false,\"pedantic\":false,\"user\":\"{user}\",\"pass\":\"pw\"}}");
        return c;
    }

    [Fact]
    public async Task Publish_outside_the_allow_list_is_rejected_and_not_delivered()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var admin = await LoginAsync(server, "admin");
        await using var c = await LoginAsync(server, "limited");
        await admin.SendAsync("SUB > 1\r\n");
        await admin.PingPongAsync();

        await c.SendAsync("PUB denied.x 2\r\nno\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Publish to \"denied.x\"'\r\n");
        await c.SendAsync("PUB allowed.x 3\r\nyes\r\n");
        await c.PingPongAsync();

        await admin.ExpectAsync("MSG allowed.x 1 3\r\nyes\r\n");
        await admin.PingPongAsync();
    }

    [Fact]
    public async Task A_wildcard_subscription_wider_than_a_deny_never_receives_the_denied_subjects()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var admin = await LoginAsync(server, "admin");
        await using var c = await LoginAsync(server, "denier");

        // secret.> is denied, but a subscription to > is wider than the deny and allowed: the
        // denied subjects are filtered at delivery (nats-server's checkDenySub).
        await c.SendAsync("SUB > 1\r\nSUB secret.* q 2\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Subscription to \"secret.*\" using queue \"q\"'\r\n");
        await c.PingPongAsync();
        await admin.SendAsync("PUB secret.plans 2\r\nno\r\nPUB public.news 3\r\nyes\r\n");
        await admin.PingPongAsync();

        await c.ExpectAsync("MSG public.news 1 3\r\nyes\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Subscribe_outside_the_allow_list_is_rejected_and_the_connection_stays_open()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await LoginAsync(server, "limited");

        await c.SendAsync("SUB denied.x 1\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Subscription to \"denied.x\"'\r\n");
        await c.SendAsync("SUB allowed.* 2\r\nPUB allowed.y 2\r\nok\r\nPING\r\n");
        await c.ExpectAsync("MSG allowed.y 2 2\r\nok\r\nPONG\r\n");
    }

    [Fact]
    public async Task Queue_subscribe_violation_names_the_queue()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await LoginAsync(server, "limited");

        await c.SendAsync("SUB denied.x workers 1\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Subscription to \"denied.x\" using queue \"workers\"'\r\n");
        await c.PingPongAsync();
    }

    [Fact]
    public async Task Deny_lists_reject_only_the_denied_subjects()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await LoginAsync(server, "denier");

        await c.SendAsync("SUB secret.x 1\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Subscription to \"secret.x\"'\r\n");
        await c.SendAsync("PUB secret.x 1\r\na\r\n");
        await c.ExpectAsync("-ERR 'Permissions Violation for Publish to \"secret.x\"'\r\n");
        await c.SendAsync("SUB public.x 2\r\nPUB public.x 1\r\nb\r\nPING\r\n");
        await c.ExpectAsync("MSG public.x 2 1\r\nb\r\nPONG\r\n");
    }

    [Fact]
    public async Task Several_violations_in_a_row_each_get_an_error()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var c = await LoginAsync(server, "limited");

        await c.SendAsync("PUB a 1\r\n1\r\nPUB b 1\r\n2\r\nSUB c 1\r\nPING\r\n");
        await c.ExpectAsync(
            "-ERR 'Permissions Violation for Publish to \"a\"'\r\n" +
            "-ERR 'Permissions Violation for Publish to \"b\"'\r\n" +
            "-ERR 'Permissions Violation for Subscription to \"c\"'\r\nPONG\r\n");
    }
}

[Trait("server", "nats-server")]
public sealed class PermissionTests_NatsServer(NatsServerFixture server) : PermissionTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class PermissionTests_Courier(CourierFixture server) : PermissionTests<CourierFixture>(server);
