using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Accounts;

/// <summary><c>allow_responses</c>: a user may answer the reply subjects of messages it received, as nats-server allows.</summary>
public abstract class AllowResponsesTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const string Config = """
        accounts {
          S: {
            users: [
              { user: one, password: one, permissions: { subscribe: "req.>", allow_responses: true } }
              { user: two, password: two, permissions: { subscribe: "req.>", allow_responses: { max: 2, expires: "1m" } } }
              { user: ask, password: ask }
            ]
          }
        }
        """;

    private readonly TServer _server;

    protected AllowResponsesTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task One_response_to_a_received_reply_subject_is_allowed_and_anything_else_is_a_publish_violation()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var responder = await WireClient.ConnectAsync(server);
        await using var requester = await WireClient.ConnectAsync(server);
        await responder.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"one","pass":"one"}""");
        await requester.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"ask","pass":"ask"}""");
        await responder.SendAsync("SUB req.x 1\r\n");
        await responder.PingPongAsync();
        await requester.SendAsync("SUB inbox.1 9\r\n");
        await requester.PingPongAsync();

        // Not a reply subject it received: denied (the connection stays).
        await responder.SendAsync("PUB inbox.1 5\r\nearly\r\n");
        await responder.ExpectAsync("-ERR 'Permissions Violation for Publish to \"inbox.1\"'\r\n");

        await requester.SendAsync("PUB req.x inbox.1 3\r\nask\r\n");
        await responder.ExpectAsync("MSG req.x 1 inbox.1 3\r\nask\r\n");
        await responder.SendAsync("PUB inbox.1 6\r\nanswer\r\n");
        await requester.ExpectAsync("MSG inbox.1 9 6\r\nanswer\r\n");

        // max 1 (the default): a second response to the same reply subject is a violation.
        await responder.SendAsync("PUB inbox.1 5\r\nagain\r\n");
        await responder.ExpectAsync("-ERR 'Permissions Violation for Publish to \"inbox.1\"'\r\n");
        await responder.SendAsync("PUB other 1\r\nx\r\n");
        await responder.ExpectAsync("-ERR 'Permissions Violation for Publish to \"other\"'\r\n");
        await responder.PingPongAsync();
    }

    [Fact]
    public async Task A_max_of_two_allows_two_responses_per_request()
    {
        await using var server = await _server.StartServerAsync(Config);
        await using var responder = await WireClient.ConnectAsync(server);
        await using var requester = await WireClient.ConnectAsync(server);
        await responder.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"two","pass":"two"}""");
        await requester.HandshakeAsync("""{"verbose":false,"pedantic":false,"user":"ask","pass":"ask"}""");
        await responder.SendAsync("SUB req.> 1\r\n");
        await responder.PingPongAsync();
        await requester.SendAsync("SUB inbox.2 9\r\n");
        await requester.PingPongAsync();

        await requester.SendAsync("PUB req.y inbox.2 1\r\nq\r\n");
        await responder.ExpectAsync("MSG req.y 1 inbox.2 1\r\nq\r\n");
        await responder.SendAsync("PUB inbox.2 1\r\na\r\nPUB inbox.2 1\r\nb\r\nPUB inbox.2 1\r\nc\r\n");
        await responder.ExpectAsync("-ERR 'Permissions Violation for Publish to \"inbox.2\"'\r\n");
        await requester.ExpectAsync("MSG inbox.2 9 1\r\na\r\nMSG inbox.2 9 1\r\nb\r\n");
        await requester.PingPongAsync();
    }
}

[Trait("server", "nats-server")]
public sealed class AllowResponsesTests_NatsServer(NatsServerFixture server) : AllowResponsesTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class AllowResponsesTests_Courier(CourierFixture server) : AllowResponsesTests<CourierFixture>(server);
