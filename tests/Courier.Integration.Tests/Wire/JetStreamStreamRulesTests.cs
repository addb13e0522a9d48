using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// Stream updates nats-server 2.9.10 refuses (configUpdateCheck) and its answers to STREAM.MSG.DELETE and
/// STREAM.MSG.GET requests that cannot be served (issue 37), on the wire.
/// </summary>
public abstract class JetStreamStreamRulesTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamStreamRulesTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Deny_delete_deny_purge_and_max_consumers_cannot_be_undone_or_changed_by_an_update()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            const string Base = "\"name\":\"D\",\"subjects\":[\"d.>\"],\"storage\":\"memory\"";
            using (var created = await RequestAsync(c, "$JS.API.STREAM.CREATE.D", $"{{{Base},\"deny_delete\":true,\"deny_purge\":true,\"max_consumers\":3}}"))
            {
                Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
            }

            await AssertErrorAsync(c, "$JS.API.STREAM.UPDATE.D", $"{{{Base},\"deny_delete\":false,\"deny_purge\":true,\"max_consumers\":3}}",
                500, 10052, "stream configuration update can not cancel deny message deletes");
            await AssertErrorAsync(c, "$JS.API.STREAM.UPDATE.D", $"{{{Base},\"deny_delete\":true,\"deny_purge\":false,\"max_consumers\":3}}",
                500, 10052, "stream configuration update can not cancel deny purge");
            await AssertErrorAsync(c, "$JS.API.STREAM.UPDATE.D", $"{{{Base},\"deny_delete\":true,\"deny_purge\":true,\"max_consumers\":4}}",
                500, 10052, "stream configuration update can not change MaxConsumers");
            await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.D", """{"seq":1}""", 500, 10057, "message delete not permitted");

            // Turning them on is allowed.
            using var plain = await RequestAsync(c, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p.>"],"storage":"memory"}""");
            using var tightened = await RequestAsync(c, "$JS.API.STREAM.UPDATE.P", """{"name":"P","subjects":["p.>"],"storage":"memory","deny_delete":true,"deny_purge":true}""");
            Assert.True(tightened.RootElement.GetProperty("config").GetProperty("deny_delete").GetBoolean(), tightened.RootElement.ToString());
        });
    }

    [Fact]
    public async Task Deleting_or_getting_a_message_that_is_not_there_or_without_a_body_answers_as_nats_server()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.E", """{"name":"E","subjects":["e.>"],"storage":"memory"}""")) { }
            await c.SendAsync("PUB e.1 1\r\na\r\nPUB e.2 1\r\nb\r\n");
            await c.PingPongAsync();

            await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.E", """{"seq":7}""", 400, 10043, "sequence 7 not found");
            using (var deleted = await RequestAsync(c, "$JS.API.STREAM.MSG.DELETE.E", """{"seq":1,"no_erase":true}"""))
            {
                Assert.True(deleted.RootElement.GetProperty("success").GetBoolean());
            }

            var again = await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.E", """{"seq":1,"no_erase":true}""", 400, 10043, "sequence 1 not found");
            Assert.False(again.TryGetProperty("success", out _), again.ToString()); // nats-server writes no "success" beside an error
            await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.E", """{"seq":2}""", null, null, null);
            await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.E", "{bad", 400, 10025, "invalid JSON");

            // No body: a bad request, before the stream is even looked for.
            foreach (var subject in new[] { "$JS.API.STREAM.MSG.DELETE.E", "$JS.API.STREAM.MSG.GET.E", "$JS.API.STREAM.MSG.DELETE.NOPE", "$JS.API.STREAM.MSG.GET.NOPE" })
            {
                await AssertErrorAsync(c, subject, "", 400, 10003, "bad request");
            }

            await AssertErrorAsync(c, "$JS.API.STREAM.MSG.DELETE.NOPE", """{"seq":1}""", 404, 10059, "stream not found");
            Assert.False(server.HasExited, server.Diagnostics());
        });
    }

    [Fact]
    public async Task Republished_messages_and_advisories_are_stored_by_the_streams_that_capture_their_subjects()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.api 1\r\n");
            await AssertErrorAsync(c, "$JS.API.STREAM.CREATE.ADVS", """{"name":"ADVS","subjects":["$JS.EVENT.ADVISORY.STREAM.>"],"storage":"memory"}""", null, null, null);
            await AssertErrorAsync(c, "$JS.API.STREAM.CREATE.SRC", """{"name":"SRC","subjects":["src.>"],"storage":"memory","republish":{"src":">","dest":"copy.>"}}""", null, null, null);
            await AssertErrorAsync(c, "$JS.API.STREAM.CREATE.COPY", """{"name":"COPY","subjects":["copy.>"],"storage":"memory"}""", null, null, null);
            await c.SendAsync("PUB src.k 5\r\nhello\r\n");
            await c.PingPongAsync();

            // The republished copy lands in COPY, with the republish headers.
            JsonElement copy = default;
            for (var attempt = 0; attempt < 50; attempt++)
            {
                copy = await AssertErrorAsync(c, "$JS.API.STREAM.INFO.COPY", "", null, null, null);
                if (copy.GetProperty("state").GetProperty("messages").GetInt64() > 0)
                {
                    break;
                }

                await Task.Delay(20);
            }

            Assert.Equal(1, copy.GetProperty("state").GetProperty("messages").GetInt64());
            var stored = (await AssertErrorAsync(c, "$JS.API.STREAM.MSG.GET.COPY", """{"seq":1}""", null, null, null)).GetProperty("message");
            Assert.Equal("copy.src.k", stored.GetProperty("subject").GetString());
            Assert.Equal("hello", System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(stored.GetProperty("data").GetString()!)));
            Assert.Contains("Nats-Stream: SRC", System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(stored.GetProperty("hdrs").GetString()!)), StringComparison.Ordinal);

            // ADVS took the creation advisories of all three streams, its own included (published once its subscription is in effect).
            var advisories = (await AssertErrorAsync(c, "$JS.API.STREAM.INFO.ADVS", "", null, null, null)).GetProperty("state").GetProperty("messages").GetInt64();
            Assert.Equal(3, advisories);
        });
    }

    /// <summary>Asserts the reply's error (or, with a null status, that there is none) and returns the reply's root.</summary>
    private static async Task<JsonElement> AssertErrorAsync(WireClient c, string subject, string body, int? status, int? code, string? description)
    {
        using var reply = await RequestAsync(c, subject, body);
        var root = reply.RootElement.Clone();
        if (status is null)
        {
            Assert.False(root.TryGetProperty("error", out _), root.ToString());
            return root;
        }

        var error = root.GetProperty("error");
        Assert.Equal((status, code, description), ((int?)error.GetProperty("code").GetInt32(), (int?)error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
        return root;
    }

    private static async Task<JsonDocument> RequestAsync(WireClient c, string subject, string body)
    {
        await c.SendAsync($"PUB {subject} _INBOX.api {System.Text.Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");
        while (true)
        {
            var reply = await c.ExpectMsgAsync();
            if (reply.Subject == "_INBOX.api")
            {
                return JsonDocument.Parse(reply.Payload);
            }
        }
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamStreamRulesTests_NatsServer(NatsServerFixture server) : JetStreamStreamRulesTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamStreamRulesTests_Courier(CourierFixture server) : JetStreamStreamRulesTests<CourierFixture>(server);
