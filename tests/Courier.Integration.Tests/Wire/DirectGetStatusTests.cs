using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// What DIRECT.GET answers a request it cannot serve, the same requests against Courier and nats-server 2.9.10
/// (stream.go processDirectGetRequest / processDirectGetLastBySubjectRequest): status-only replies, 408 for an
/// empty, unreadable or self-contradicting request or a body on the last-by-subject form, 404 for a missing message.
/// </summary>
public abstract class DirectGetStatusTests<TServer>(TServer server) : IClassFixture<TServer>
    where TServer : ServerFixture
{
    [Fact]
    public Task Requests_it_cannot_serve_get_nats_servers_statuses() =>
        NatsNetClient.WithJetStreamAsync(server, async (nats, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]) { AllowDirect = true }, ct);
            (await js.PublishAsync($"{p}.a", "one", cancellationToken: ct)).EnsureSuccess();

            async Task<(int Code, string Text, string? Data)> AskAsync(string subject, string? body)
            {
                var reply = await nats.RequestAsync<byte[], string>(subject, body is null ? null : System.Text.Encoding.UTF8.GetBytes(body), cancellationToken: ct);
                return (reply.Headers?.Code ?? 0, reply.Headers?.MessageText ?? "", reply.Data);
            }

            var direct = $"$JS.API.DIRECT.GET.{name}";
            Assert.Equal((408, "Empty Request"), Status(await AskAsync(direct, null)));
            Assert.Equal((408, "Empty Request"), Status(await AskAsync(direct, "{}")));
            Assert.Equal((408, "Malformed Request"), Status(await AskAsync(direct, "x")));
            Assert.Equal((408, "Bad Request"), Status(await AskAsync(direct, $$"""{"seq":1,"last_by_subj":"{{p}}.a"}""")));
            Assert.Equal((408, "Bad Request"), Status(await AskAsync(direct, $$"""{"last_by_subj":"{{p}}.a","next_by_subj":"{{p}}.a"}""")));
            Assert.Equal((404, "Message Not Found"), Status(await AskAsync(direct, """{"seq":99}""")));
            Assert.Equal((408, "Bad Request"), Status(await AskAsync($"{direct}.{p}.a", "{}")));

            // And what it can: by sequence, and the last of a subject, with the stream's headers.
            Assert.Equal("one", (await AskAsync(direct, """{"seq":1}""")).Data);
            Assert.Equal("one", (await AskAsync($"{direct}.{p}.a", null)).Data);
        });

    private static (int, string) Status((int Code, string Text, string? Data) reply) => (reply.Code, reply.Text);
}

[Trait("server", "nats-server")]
public sealed class DirectGetStatusTests_NatsServer(NatsServerFixture server) : DirectGetStatusTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class DirectGetStatusTests_Courier(CourierFixture server) : DirectGetStatusTests<CourierFixture>(server);
