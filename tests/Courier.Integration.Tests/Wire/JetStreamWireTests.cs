using System.Text.Json;
using System.Text.RegularExpressions;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// JetStream's bytes on the wire, which every client library depends on: the PubAck JSON and the
/// ack subjects of delivered messages, with their sequence numbers and pending counts.
/// </summary>
public abstract partial class JetStreamWireTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected JetStreamWireTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Pub_acks_and_ack_subjects_have_nats_servers_exact_form_and_double_acks_are_confirmed()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.w.* 1\r\n");
            const string stream = """{"name":"W","subjects":["w.>"],"storage":"file"}""";
            await c.SendAsync($"PUB $JS.API.STREAM.CREATE.W _INBOX.w.create {stream.Length}\r\n{stream}\r\n");
            Assert.Contains("\"type\":\"io.nats.jetstream.api.v1.stream_create_response\"", (await c.ExpectMsgAsync()).PayloadText, StringComparison.Ordinal);

            for (var i = 1; i <= 3; i++)
            {
                await c.SendAsync($"PUB w.{i} _INBOX.w.ack {i}\r\n{new string('x', i)}\r\n");
                var ack = await c.ExpectMsgAsync();
                Assert.Equal("_INBOX.w.ack", ack.Subject);
                Assert.Equal($$"""{"stream":"W", "seq":{{i}}}""", ack.PayloadText); // nats-server's own template, space included
            }

            // A repeated Nats-Msg-Id inside the duplicate window is acknowledged with the original sequence.
            const string withId = "NATS/1.0\r\nNats-Msg-Id: m1\r\n\r\n";
            await c.SendAsync($"HPUB w.id _INBOX.w.ack {withId.Length} {withId.Length + 1}\r\n{withId}a\r\nHPUB w.id _INBOX.w.ack {withId.Length} {withId.Length + 1}\r\n{withId}b\r\n");
            Assert.Equal("""{"stream":"W", "seq":4}""", (await c.ExpectMsgAsync()).PayloadText);
            Assert.Equal("""{"stream":"W", "seq":4,"duplicate": true}""", (await c.ExpectMsgAsync()).PayloadText);

            const string consumer = """{"stream_name":"W","config":{"durable_name":"D","ack_policy":"explicit","filter_subject":"w.*"}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.W.D _INBOX.w.consumer {consumer.Length}\r\n{consumer}\r\n");
            using (var created = JsonDocument.Parse((await c.ExpectMsgAsync()).Payload))
            {
                // nats-server's defaults for what the request left out.
                var config = created.RootElement.GetProperty("config");
                Assert.Equal(1000, config.GetProperty("max_ack_pending").GetInt64());
                Assert.Equal(-1, config.GetProperty("max_deliver").GetInt64());
                Assert.Equal(30_000_000_000, config.GetProperty("ack_wait").GetInt64());
                Assert.Equal(512, config.GetProperty("max_waiting").GetInt64());
                Assert.Equal("all", config.GetProperty("deliver_policy").GetString());
            }

            await c.SendAsync("SUB _INBOX.fetch 2\r\nPUB $JS.API.CONSUMER.MSG.NEXT.W.D _INBOX.fetch 11\r\n{\"batch\":3}\r\n");
            var delivered = new List<WireMessage>();
            for (var i = 1; i <= 3; i++)
            {
                var m = await c.ExpectMsgAsync();
                Assert.Equal($"w.{i}", m.Subject); // the stored message's own subject, not the inbox
                Assert.Equal("2", m.Sid);
                Assert.Equal(new string('x', i), m.PayloadText);
                var tokens = AckSubject().Match(m.Reply ?? "");
                Assert.True(tokens.Success, $"ack subject {m.Reply}");
                Assert.Equal("1", tokens.Groups["delivered"].Value);
                Assert.Equal($"{i}", tokens.Groups["sseq"].Value);
                Assert.Equal($"{i}", tokens.Groups["cseq"].Value);
                Assert.Equal($"{4 - i}", tokens.Groups["pending"].Value); // w.id (seq 4) matches the filter too
                delivered.Add(m);
            }

            // A double ack (with a reply subject) is confirmed with an empty message once it is recorded. The
            // plain ack goes first: nats-server records acks in order on the consumer's goroutine, so after the
            // confirmation both are recorded and CONSUMER.INFO below cannot overtake the plain one.
            await c.SendAsync($"PUB {delivered[0].Reply} 0\r\n\r\nPUB {delivered[1].Reply} _INBOX.w.confirm 4\r\n+ACK\r\n");
            var confirm = await c.ExpectMsgAsync();
            Assert.Equal("_INBOX.w.confirm", confirm.Subject);
            Assert.Empty(confirm.Payload);

            await c.SendAsync("PUB $JS.API.CONSUMER.INFO.W.D _INBOX.w.info 0\r\n\r\n");
            using var info = JsonDocument.Parse((await c.ExpectMsgAsync()).Payload);
            Assert.Equal(2UL, info.RootElement.GetProperty("ack_floor").GetProperty("stream_seq").GetUInt64());
            Assert.Equal(1, info.RootElement.GetProperty("num_ack_pending").GetInt32());
            Assert.Equal(1UL, info.RootElement.GetProperty("num_pending").GetUInt64());
        });
    }

    [Fact]
    public async Task A_push_consumer_waits_for_a_subscriber_on_its_deliver_subject_and_loses_nothing_meanwhile()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.p.* 1\r\n");
            const string stream = """{"name":"P","subjects":["p.>"],"storage":"memory"}""";
            await c.SendAsync($"PUB $JS.API.STREAM.CREATE.P _INBOX.p.create {stream.Length}\r\n{stream}\r\n");
            await c.ExpectMsgAsync();

            // An ack-none push consumer whose deliver subject nobody subscribes to yet.
            const string consumer = """{"stream_name":"P","config":{"durable_name":"PD","deliver_subject":"pushed.here","ack_policy":"none"}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.P.PD _INBOX.p.consumer {consumer.Length}\r\n{consumer}\r\n");
            Assert.Contains("consumer_create_response", (await c.ExpectMsgAsync()).PayloadText, StringComparison.Ordinal);
            for (var i = 1; i <= 3; i++)
            {
                await c.SendAsync($"PUB p.{i} _INBOX.p.ack 1\r\n{i}\r\n");
                await c.ExpectMsgAsync();
            }

            await Task.Delay(300); // time enough to have delivered them, had anyone listened

            // Once someone subscribes, every message arrives, in order.
            await c.SendAsync("SUB pushed.here 2\r\n");
            for (var i = 1; i <= 3; i++)
            {
                var m = await c.ExpectMsgAsync();
                Assert.Equal("2", m.Sid);
                Assert.Equal($"p.{i}", m.Subject);
                Assert.Equal($"{i}", m.PayloadText);
            }
        });
    }

    [Fact]
    public async Task A_push_consumers_create_reply_counts_what_it_will_deliver_though_delivery_starts_before_the_reply()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.k.* 1\r\nSUB keys.inbox 2\r\n");
            const string stream = """{"name":"K","subjects":["k.>"],"storage":"file"}""";
            await c.SendAsync($"PUB $JS.API.STREAM.CREATE.K _INBOX.k.create {stream.Length}\r\n{stream}\r\n");
            await c.ExpectMsgAsync();
            foreach (var subject in new[] { "k.a", "k.b", "k.a" })
            {
                await c.SendAsync($"PUB {subject} _INBOX.k.ack 1\r\nv\r\n");
                await c.ExpectMsgAsync();
            }

            // What NATS.Net's KV GetKeysAsync asks for; it lists nothing if the reply says num_pending 0.
            const string consumer = """{"stream_name":"K","config":{"name":"L","deliver_subject":"keys.inbox","deliver_policy":"last_per_subject","ack_policy":"none","headers_only":true,"filter_subject":"k.>","flow_control":true,"idle_heartbeat":5000000000}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.K.L.k.> _INBOX.k.consumer {consumer.Length}\r\n{consumer}\r\n");

            // The deliveries may come before the reply (they do on nats-server): take all three.
            var frames = new List<WireMessage> { await c.ExpectMsgAsync(), await c.ExpectMsgAsync(), await c.ExpectMsgAsync() };
            var reply = Assert.Single(frames, m => m.Subject == "_INBOX.k.consumer");
            using var created = JsonDocument.Parse(reply.Payload);
            Assert.Equal(2UL, created.RootElement.GetProperty("num_pending").GetUInt64());
            Assert.Equal(0UL, created.RootElement.GetProperty("delivered").GetProperty("consumer_seq").GetUInt64()); // nothing sent yet
            Assert.Equal(["k.b", "k.a"], frames.Where(m => m.Sid == "2").Select(m => m.Subject));
        });
    }

    [Fact]
    public async Task Names_and_lists_page_with_the_requests_offset_and_report_total_offset_and_limit()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.pg.* 1\r\n");
            foreach (var name in new[] { "PC", "PA", "PB" })
            {
                var config = $$"""{"name":"{{name}}","subjects":["{{name.ToLowerInvariant()}}.>"],"storage":"memory"}""";
                await c.SendAsync($"PUB $JS.API.STREAM.CREATE.{name} _INBOX.pg.create {config.Length}\r\n{config}\r\n");
                await c.ExpectMsgAsync();
            }

            foreach (var name in new[] { "C2", "C3", "C1" })
            {
                var consumer = $$$"""{"stream_name":"PA","config":{"durable_name":"{{{name}}}","ack_policy":"explicit"}}""";
                await c.SendAsync($"PUB $JS.API.CONSUMER.DURABLE.CREATE.PA.{name} _INBOX.pg.consumer {consumer.Length}\r\n{consumer}\r\n");
                await c.ExpectMsgAsync();
            }

            async Task<JsonDocument> RequestAsync(string subject, string body)
            {
                await c.SendAsync($"PUB {subject} _INBOX.pg.reply {body.Length}\r\n{body}\r\n");
                return JsonDocument.Parse((await c.ExpectMsgAsync()).Payload);
            }

            static string[] Names(JsonElement array) => [.. array.EnumerateArray().Select(e => e.ValueKind == JsonValueKind.String ? e.GetString()!
                : e.TryGetProperty("name", out var name) ? name.GetString()! : e.GetProperty("config").GetProperty("name").GetString()!)];

            // Sorted by name; the page starts at the offset; total counts them all; limit is the API's page size.
            using (var names = await RequestAsync("$JS.API.STREAM.NAMES", """{"offset":1}"""))
            {
                Assert.Equal((3, 1, 1024), (names.RootElement.GetProperty("total").GetInt32(), names.RootElement.GetProperty("offset").GetInt32(), names.RootElement.GetProperty("limit").GetInt32()));
                Assert.Equal(["PB", "PC"], Names(names.RootElement.GetProperty("streams")));
            }

            using (var list = await RequestAsync("$JS.API.STREAM.LIST", """{"offset":2}"""))
            {
                Assert.Equal((3, 2, 256), (list.RootElement.GetProperty("total").GetInt32(), list.RootElement.GetProperty("offset").GetInt32(), list.RootElement.GetProperty("limit").GetInt32()));
                Assert.Equal(["PC"], Names(list.RootElement.GetProperty("streams")));
            }

            using (var past = await RequestAsync("$JS.API.STREAM.NAMES", """{"offset":10}"""))
            {
                Assert.Equal(3, past.RootElement.GetProperty("total").GetInt32());
                Assert.Equal(0, past.RootElement.TryGetProperty("streams", out var none) && none.ValueKind == JsonValueKind.Array ? none.GetArrayLength() : 0);
            }

            using (var consumers = await RequestAsync("$JS.API.CONSUMER.NAMES.PA", """{"offset":1}"""))
            {
                Assert.Equal((3, 1, 1024), (consumers.RootElement.GetProperty("total").GetInt32(), consumers.RootElement.GetProperty("offset").GetInt32(), consumers.RootElement.GetProperty("limit").GetInt32()));
                Assert.Equal(["C2", "C3"], Names(consumers.RootElement.GetProperty("consumers")));
            }

            using var infos = await RequestAsync("$JS.API.CONSUMER.LIST.PA", """{"offset":2}""");
            Assert.Equal((3, 2, 256), (infos.RootElement.GetProperty("total").GetInt32(), infos.RootElement.GetProperty("offset").GetInt32(), infos.RootElement.GetProperty("limit").GetInt32()));
            Assert.Equal(["C3"], Names(infos.RootElement.GetProperty("consumers")));
        });
    }

    // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>
    [GeneratedRegex(@"^\$JS\.ACK\.W\.D\.(?<delivered>\d+)\.(?<sseq>\d+)\.(?<cseq>\d+)\.(?<ts>\d{19})\.(?<pending>\d+)$")]
    private static partial Regex AckSubject();
}

[Trait("server", "nats-server")]
public sealed class JetStreamWireTests_NatsServer(NatsServerFixture server) : JetStreamWireTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamWireTests_Courier(CourierFixture server) : JetStreamWireTests<CourierFixture>(server);

/// <summary>
/// Courier only: <c>filter_subjects</c> is nats-server 2.10's, and the reference server here is
/// 2.9.10, which ignores the field; these cases follow 2.10's consumer.go.
/// </summary>
[Trait("server", "courier")]
public sealed class JetStreamFilterSubjectsTests(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public async Task A_consumer_with_several_filters_counts_and_delivers_only_their_subjects_and_refuses_overlaps()
    {
        await server.WithJetStreamAsync(async process =>
        {
            await using var c = await WireClient.ConnectAsync(process);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.f.* 1\r\n");
            const string stream = """{"name":"F","subjects":["f.>"],"storage":"memory"}""";
            await c.SendAsync($"PUB $JS.API.STREAM.CREATE.F _INBOX.f.create {stream.Length}\r\n{stream}\r\n");
            await c.ExpectMsgAsync();
            foreach (var subject in new[] { "f.a", "f.b", "f.c", "f.a", "f.c", "f.b" })
            {
                await c.SendAsync($"PUB {subject} _INBOX.f.ack 1\r\nx\r\n");
                await c.ExpectMsgAsync();
            }

            const string overlapping = """{"stream_name":"F","config":{"durable_name":"O","ack_policy":"explicit","filter_subjects":["f.*","f.a"]}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.F.O _INBOX.f.o {overlapping.Length}\r\n{overlapping}\r\n");
            Assert.Contains("\"err_code\":10138", (await c.ExpectMsgAsync()).PayloadText, StringComparison.Ordinal);

            const string consumer = """{"stream_name":"F","config":{"durable_name":"AB","ack_policy":"explicit","filter_subjects":["f.a","f.b"]}}""";
            await c.SendAsync($"PUB $JS.API.CONSUMER.CREATE.F.AB _INBOX.f.c {consumer.Length}\r\n{consumer}\r\n");
            using (var info = System.Text.Json.JsonDocument.Parse((await c.ExpectMsgAsync()).Payload))
            {
                Assert.Equal(4UL, info.RootElement.GetProperty("num_pending").GetUInt64());
            }

            await c.SendAsync("SUB _INBOX.fetch 2\r\nPUB $JS.API.CONSUMER.MSG.NEXT.F.AB _INBOX.fetch 27\r\n{\"batch\":10,\"no_wait\":true}\r\n");
            var subjects = new List<string>();
            while (true)
            {
                var m = await c.ExpectMsgAsync();
                if (m.Op == "HMSG" && m.Payload.Length == 0)
                {
                    break; // the status that ends the request
                }

                subjects.Add(m.Subject);
            }

            Assert.Equal(["f.a", "f.b", "f.a", "f.b"], subjects);
        });
    }
}

/// <summary>
/// Hostile input to every JetStream API subject: malformed, mistyped and out-of-range requests get
/// an answer or none, but the server stays up and its API keeps answering (both servers).
/// </summary>
public abstract class JetStreamHostileInputTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private static readonly string[] Subjects =
    [
        "INFO", "STREAM.CREATE.H", "STREAM.UPDATE.H", "STREAM.INFO.H", "STREAM.PURGE.H", "STREAM.MSG.GET.H",
        "STREAM.MSG.DELETE.H", "STREAM.NAMES", "STREAM.LIST", "CONSUMER.CREATE.H", "CONSUMER.CREATE.H.C",
        "CONSUMER.CREATE.H.C.h.x", "CONSUMER.DURABLE.CREATE.H.C", "CONSUMER.INFO.H.C", "CONSUMER.NAMES.H",
        "CONSUMER.LIST.H", "CONSUMER.MSG.NEXT.H.C", "DIRECT.GET.H", "DIRECT.GET.H.h.x", "CONSUMER.DELETE.H.C",
    ];

    private static readonly string[] Payloads =
    [
        "", "{", "null", "[]", "\"text\"", "12345678901234567890123", "{\"name\":123}", "{\"name\":\"\"}",
"{\"name\":\"H\",\"subjects\":[\"h.>\"],\"max_msgs\":-5,\"max_bytes\":\"x\"}",
        "{\"name\":\"H\",\"subjects\":[\"h.>\"],\"retention\":\"bogus\",\"storage\":\"tape\",\"discard\":7}",
        "{\"seq\":-1}", "{\"seq\":18446744073709551615}", "{\"last_by_subj\":\"h.*\"}", "{\"filter\":\"h..x\",\"keep\":-1}",
        "{\"batch\":-1}", "{\"batch\":2147483648}", "{\"batch\":1,\"expires\":-1,\"max_bytes\":-1}", "{\"offset\":1000000}",
        "{\"stream_name\":\"H\",\"config\":null}", "{\"stream_name\":\"H\",\"config\":{\"durable_name\":\"a.b\"}}",
        "{\"stream_name\":\"H\",\"config\":{\"durable_name\":\"C\",\"deliver_policy\":\"by_start_sequence\"}}",
        "{\"stream_name\":\"H\",\"config\":{\"durable_name\":\"C\",\"ack_wait\":-1,\"max_deliver\":-7,\"backoff\":[-1]}}",
        "{\"stream_name\":\"H\",\"config\":{\"durable_name\":\"C\",\"filter_subject\":\"h.>\",\"filter_subjects\":[\"h.a\"]}}",
        new string('{', 5000), "{\"a\":" + new string('[', 2000) + new string(']', 2000) + "}",
    ];

    /// <summary>
    /// Payloads nats-server 2.9.10 itself does not survive (STREAM.NAMES with a negative offset panics
    /// it: "slice bounds out of range"), sent only to Courier.
    /// </summary>
    private static readonly string[] CourierOnlyPayloads = ["{\"offset\":-10}", "{\"offset\":-9223372036854775808}"];

    private readonly TServer _server;

    protected JetStreamHostileInputTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public async Task Every_api_subject_survives_malformed_requests_and_keeps_answering()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await WireClient.ConnectAsync(server);
            await c.HandshakeAsync();
            await c.SendAsync("SUB _INBOX.h.* 1\r\n");
            const string stream = """{"name":"H","subjects":["h.>"],"storage":"file"}""";
            await c.SendAsync($"PUB $JS.API.STREAM.CREATE.H _INBOX.h.create {stream.Length}\r\n{stream}\r\n");
            await c.ExpectMsgAsync();
            await c.SendAsync("PUB h.1 _INBOX.h.ack 1\r\nx\r\n");
            await c.ExpectMsgAsync();

            var burst = new System.Text.StringBuilder();
            foreach (var subject in Subjects)
            {
                foreach (var payload in _server is CourierFixture ? [.. Payloads, .. CourierOnlyPayloads] : Payloads)
                {
                    var bytes = System.Text.Encoding.UTF8.GetByteCount(payload);
                    burst.Append(System.Globalization.CultureInfo.InvariantCulture, $"PUB $JS.API.{subject} _INBOX.h.junk {bytes}\r\n{payload}\r\n");
                }
            }

            // Replies (or silence) to the junk are not checked; the answers to a PING and to a good request are.
            await c.SendAsync(burst.ToString());
            await c.SendAsync("UNSUB 1\r\nSUB _INBOX.ok 2\r\nPUB $JS.API.STREAM.INFO.H _INBOX.ok 0\r\n\r\n");
            var deadline = DateTime.UtcNow.AddSeconds(30);
            WireMessage info;
            do
            {
                info = await c.ExpectMsgAsync();
            }
            while (info.Sid != "2" && DateTime.UtcNow < deadline);

            Assert.Equal("2", info.Sid);
            using var json = JsonDocument.Parse(info.Payload);
            Assert.Equal("io.nats.jetstream.api.v1.stream_info_response", json.RootElement.GetProperty("type").GetString());
            Assert.False(server.HasExited, server.Diagnostics());
        });
    }
}

[Trait("server", "nats-server")]
public sealed class JetStreamHostileInputTests_NatsServer(NatsServerFixture server) : JetStreamHostileInputTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamHostileInputTests_Courier(CourierFixture server) : JetStreamHostileInputTests<CourierFixture>(server);
