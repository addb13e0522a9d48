using System.Text.Json;
using Courier.Integration.Tests.Infrastructure;

namespace Courier.Integration.Tests.Wire;

/// <summary>
/// The stream API as nats-server 2.9 answers it, on the wire: the create-time refusals with
/// nats-server's codes and texts, a repeated create with another configuration, a sealed stream's
/// purge and delete, republish, STREAM.INFO's subject and deleted details, STREAM.NAMES' subject
/// filter and the API counters of $JS.API.INFO.
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
    public async Task Stream_create_refuses_sealed_discard_new_per_subject_and_mirror_direct_with_nats_servers_codes()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);

            async Task AssertRefusedAsync(string config, int status, int code, string description)
            {
                using var reply = await RequestAsync(c, "$JS.API.STREAM.CREATE.S", config);
                var error = reply.RootElement.GetProperty("error");
                Assert.Equal((status, code, description), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
                Assert.Equal("io.nats.jetstream.api.v1.stream_create_response", reply.RootElement.GetProperty("type").GetString());
            }

            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","sealed":true}""",
                500, 10052, "stream configuration for create can not be sealed");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","discard_new_per_subject":true,"max_msgs_per_subject":1}""",
                500, 10052, "discard new per subject requires discard new policy to be set");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","discard":"new","discard_new_per_subject":true}""",
                500, 10052, "discard new per subject requires max msgs per subject > 0");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","mirror_direct":true}""",
                500, 10052, "stream has no mirror but does have mirror direct");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","republish":{"src":"other.>","dest":"out.>"}}""",
                500, 10052, "stream configuration for republish source is not valid subset of subjects");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","republish":{"src":"s.>","dest":"s.out.>"}}""",
                500, 10052, "stream configuration for republish destination forms a cycle");
            await AssertRefusedAsync("""{"name":"S","subjects":["s.>"],"storage":"memory","republish":{"src":"s.*","dest":"out.x"}}""",
                500, 10052, "stream configuration for republish not valid");

            // None of them was created; the same stream within the rules is, with nats-server's defaults filled in.
            using var names = await RequestAsync(c, "$JS.API.STREAM.NAMES", "");
            Assert.Equal(0, names.RootElement.GetProperty("total").GetInt32());
            using var created = await RequestAsync(c, "$JS.API.STREAM.CREATE.S",
                """{"name":"S","subjects":["s.>"],"storage":"memory","discard":"new","discard_new_per_subject":true,"max_msgs_per_subject":1,"max_consumers":0,"max_msgs":0}""");
            var config = created.RootElement.GetProperty("config");
            Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
            Assert.Equal((-1, -1L, -1L, 1L, 120_000_000_000L, true), (config.GetProperty("max_consumers").GetInt32(), config.GetProperty("max_msgs").GetInt64(),
                config.GetProperty("max_bytes").GetInt64(), config.GetProperty("max_msgs_per_subject").GetInt64(), config.GetProperty("duplicate_window").GetInt64(),
                config.GetProperty("discard_new_per_subject").GetBoolean()));
            Assert.False(server.HasExited, server.Diagnostics());
        });
    }

    [Fact]
    public async Task A_stream_create_reply_echoes_the_configuration_fields_the_request_had()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using var created = await RequestAsync(c, "$JS.API.STREAM.CREATE.E",
                """{"name":"E","subjects":["e.>"],"storage":"memory","description":"echo","republish":{"src":"e.>","dest":"echo.>","headers_only":true},"subject_transform":{"src":"e.>","dest":"t.>"}}""");
            var config = created.RootElement.GetProperty("config");
            Assert.Equal("echo", config.GetProperty("description").GetString());
            var republish = config.GetProperty("republish");
            Assert.Equal(("e.>", "echo.>", true), (republish.GetProperty("src").GetString(), republish.GetProperty("dest").GetString(), republish.GetProperty("headers_only").GetBoolean()));

            // 2.10's subject_transform: nats-server 2.9.10 does not know it and drops it; Courier keeps
            // it and echoes it (a 2.10 client failed on its absence), and applies it (see the subject_transform test).
            var echoed = config.TryGetProperty("subject_transform", out var transform);
            Assert.Equal(_server.Kind == ServerKind.Courier, echoed);
            if (echoed)
            {
                Assert.Equal("t.>", transform.GetProperty("dest").GetString());
            }

            using var info = await RequestAsync(c, "$JS.API.STREAM.INFO.E", "");
            Assert.Equal(echoed, info.RootElement.GetProperty("config").TryGetProperty("subject_transform", out _));
        });
    }

    [Fact]
    public async Task Mirror_and_sources_creates_are_checked_as_nats_server_checks_them_and_a_mirror_cannot_be_changed()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory","max_msg_size":1024}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p.>"],"storage":"memory"}""")) { }

            async Task AssertRefusedAsync(string name, string config, int status, int code, string description)
            {
                using var reply = await RequestAsync(c, $"$JS.API.STREAM.CREATE.{name}", config);
                AssertError(reply, status, code, description);
            }

            await AssertRefusedAsync("M", """{"name":"M","storage":"memory","subjects":["m.>"],"mirror":{"name":"O"}}""", 400, 10034, "stream mirrors can not contain subjects");
            await AssertRefusedAsync("M", """{"name":"M","storage":"memory","mirror":{"name":"O"},"sources":[{"name":"P"}]}""", 400, 10031, "stream mirrors can not also contain other sources");
            await AssertRefusedAsync("M", """{"name":"M","storage":"memory","mirror":{"name":"O"},"max_msg_size":512}""", 400, 10030, "stream mirror must have max message size >= source");
            await AssertRefusedAsync("M", """{"name":"M","storage":"memory","mirror":{"name":"O","filter_subject":"x.y"}}""",
                500, 10052, "mirror 'O' filter subject 'x.y' does not overlap with any origin stream subject");
            await AssertRefusedAsync("M", """{"name":"M","storage":"memory","mirror":{"name":"M"}}""", 500, 10052, "detected cycle");
            await AssertRefusedAsync("S", """{"name":"S","storage":"memory","sources":[{"name":"O"}],"max_msg_size":100}""", 400, 10046, "stream source must have max message size >= target");
            await AssertRefusedAsync("S", """{"name":"S","storage":"memory","sources":[{"name":"P","filter_subject":"o.x"}]}""",
                500, 10052, "source 'P' filter subject 'o.x' does not overlap with any origin stream subject");

            // Within the rules both are created, with no subjects of their own; a mirror of a stream that does not exist yet too.
            using (var mirror = await RequestAsync(c, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O","filter_subject":"o.a"}}"""))
            {
                Assert.False(mirror.RootElement.TryGetProperty("error", out _), mirror.RootElement.ToString());
                Assert.False(mirror.RootElement.GetProperty("config").TryGetProperty("subjects", out _));
                Assert.Equal("O", mirror.RootElement.GetProperty("config").GetProperty("mirror").GetProperty("name").GetString());
            }

            using (var sources = await RequestAsync(c, "$JS.API.STREAM.CREATE.S", """{"name":"S","storage":"memory","sources":[{"name":"O"},{"name":"LATER"}]}"""))
            {
                Assert.False(sources.RootElement.TryGetProperty("error", out _), sources.RootElement.ToString());
                Assert.Equal(2, sources.RootElement.GetProperty("config").GetProperty("sources").GetArrayLength());
            }

            // A stream sourcing S, which S then sources back, is a cycle.
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.T", """{"name":"T","storage":"memory","sources":[{"name":"S"}]}""")) { }
            using (var cycle = await RequestAsync(c, "$JS.API.STREAM.UPDATE.S", """{"name":"S","storage":"memory","sources":[{"name":"O"},{"name":"T"}]}"""))
            {
                AssertError(cycle, 500, 10052, "detected cycle");
            }

            using (var changed = await RequestAsync(c, "$JS.API.STREAM.UPDATE.M", """{"name":"M","storage":"memory","mirror":{"name":"P"}}"""))
            {
                AssertError(changed, 400, 10055, "stream mirror configuration can not be updated");
            }
        });
    }

    [Fact]
    public async Task A_subject_transform_stores_published_subjects_mapped_on_courier_while_nats_server_2_9_ignores_it()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (var refused = await RequestAsync(c, "$JS.API.STREAM.CREATE.B", """{"name":"B","subjects":["b.*"],"storage":"memory","subject_transform":{"src":"b.*","dest":"mapped.$2"}}"""))
            {
                // nats-server 2.9.10 does not know the field; 2.10 refuses a destination it cannot build, as Courier does.
                Assert.Equal(_server.Kind == ServerKind.Courier, refused.RootElement.TryGetProperty("error", out _));
            }

            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.T", """{"name":"T","subjects":["in.*","other"],"storage":"memory","subject_transform":{"src":"in.*","dest":"mapped.$1"}}""")) { }
            foreach (var subject in new[] { "in.a", "other" })
            {
                await c.SendAsync($"PUB {subject} _INBOX.api 1\r\nx\r\n");
                await c.ExpectMsgAsync();
            }

            // 2.10's input transform maps a matching subject before it is stored; others are stored as published.
            using var first = await RequestAsync(c, "$JS.API.STREAM.MSG.GET.T", """{"seq":1}""");
            Assert.Equal(_server.Kind == ServerKind.Courier ? "mapped.a" : "in.a", first.RootElement.GetProperty("message").GetProperty("subject").GetString());
            using var second = await RequestAsync(c, "$JS.API.STREAM.MSG.GET.T", """{"seq":2}""");
            Assert.Equal("other", second.RootElement.GetProperty("message").GetProperty("subject").GetString());
        });
    }

    [Fact]
    public async Task A_mirror_of_a_stream_that_does_not_exist_reports_it_in_stream_info_and_fills_once_it_is_created()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O"}}""")) { }

            var missing = await PollInfoAsync(c, "M", i => i.GetProperty("mirror").TryGetProperty("error", out _));
            var mirror = missing.GetProperty("mirror");
            Assert.Equal(("O", 0UL, -1L), (mirror.GetProperty("name").GetString(), mirror.GetProperty("lag").GetUInt64(), mirror.GetProperty("active").GetInt64()));
            var error = mirror.GetProperty("error");
            Assert.Equal((404, 10059, "stream not found"), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
            Assert.False(mirror.TryGetProperty("external", out _));

            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.O", """{"name":"O","subjects":["o.>"],"storage":"memory"}""")) { }
            await c.SendAsync("PUB o.1 _INBOX.api 3\r\none\r\nPUB o.2 _INBOX.api 3\r\ntwo\r\n");
            await c.ExpectMsgAsync();
            await c.ExpectMsgAsync();

            var filled = await PollInfoAsync(c, "M", i => i.GetProperty("state").GetProperty("messages").GetUInt64() == 2 && !i.GetProperty("mirror").TryGetProperty("error", out _));
            Assert.True(filled.GetProperty("mirror").GetProperty("active").GetInt64() >= 0);
        });
    }

    [Fact]
    public async Task Creating_a_stream_again_with_another_configuration_is_refused_and_a_sealed_stream_refuses_purge_and_delete()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            const string Config = """{"name":"Z","subjects":["z.>"],"storage":"memory"}""";
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.Z", Config)) { }

            // The same configuration again returns the stream; another one is refused.
            using (var again = await RequestAsync(c, "$JS.API.STREAM.CREATE.Z", Config))
            {
                Assert.False(again.RootElement.TryGetProperty("error", out _), again.RootElement.ToString());
                Assert.Equal("Z", again.RootElement.GetProperty("config").GetProperty("name").GetString());
            }

            using (var other = await RequestAsync(c, "$JS.API.STREAM.CREATE.Z", """{"name":"Z","subjects":["z.>"],"storage":"memory","max_msgs":10}"""))
            {
                AssertError(other, 400, 10058, "stream name already in use with a different configuration");
            }

            await c.SendAsync("PUB z.a 1\r\na\r\nPUB z.b 1\r\nb\r\n");
            await c.PingPongAsync();
            using (var sealedInfo = await RequestAsync(c, "$JS.API.STREAM.UPDATE.Z", """{"name":"Z","subjects":["z.>"],"storage":"memory","sealed":true}"""))
            {
                Assert.True(sealedInfo.RootElement.GetProperty("config").GetProperty("sealed").GetBoolean(), sealedInfo.RootElement.ToString());
            }

            using (var purge = await RequestAsync(c, "$JS.API.STREAM.PURGE.Z", ""))
            {
                AssertError(purge, 400, 10109, "invalid operation on sealed stream");
            }

            using (var delete = await RequestAsync(c, "$JS.API.STREAM.MSG.DELETE.Z", """{"seq":1}"""))
            {
                AssertError(delete, 400, 10109, "invalid operation on sealed stream");
            }

            using var info = await RequestAsync(c, "$JS.API.STREAM.INFO.Z", "");
            Assert.Equal(2UL, info.RootElement.GetProperty("state").GetProperty("messages").GetUInt64());
        });
    }

    [Fact]
    public async Task Republish_is_stored_returned_and_each_stored_message_is_published_again_with_its_stream_headers()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            await c.SendAsync("SUB out.> 2\r\n");
            using (var created = await RequestAsync(c, "$JS.API.STREAM.CREATE.RP", """{"name":"RP","subjects":["rp.*"],"storage":"memory","republish":{"dest":"out.>"}}"""))
            {
                var republish = created.RootElement.GetProperty("config").GetProperty("republish");
                Assert.Equal((">", "out.>"), (republish.GetProperty("src").GetString(), republish.GetProperty("dest").GetString()));
            }

            await c.SendAsync("PUB rp.a 5\r\nfirst\r\nPUB rp.b 1\r\nx\r\nHPUB rp.a 22 28\r\nNATS/1.0\r\nX-Own: 1\r\n\r\nsecond\r\n");
            var republished = new List<WireMessage>();
            while (republished.Count < 3)
            {
                var m = await c.ExpectMsgAsync();
                if (m.Sid == "2")
                {
                    republished.Add(m);
                }
            }

            Assert.Equal(("out.rp.a", "first"), (republished[0].Subject, republished[0].PayloadText));
            AssertHeaders(republished[0], ("Nats-Stream", "RP"), ("Nats-Subject", "rp.a"), ("Nats-Sequence", "1"), ("Nats-Last-Sequence", "0"));
            Assert.Equal(("out.rp.b", "x"), (republished[1].Subject, republished[1].PayloadText));
            AssertHeaders(republished[1], ("Nats-Subject", "rp.b"), ("Nats-Sequence", "2"), ("Nats-Last-Sequence", "0"));
            Assert.Equal(("out.rp.a", "second"), (republished[2].Subject, republished[2].PayloadText));
            AssertHeaders(republished[2], ("X-Own", "1"), ("Nats-Subject", "rp.a"), ("Nats-Sequence", "3"), ("Nats-Last-Sequence", "1"));

            // The stream info keeps it, and an update may not change it.
            using var info = await RequestAsync(c, "$JS.API.STREAM.INFO.RP", "");
            Assert.Equal("out.>", info.RootElement.GetProperty("config").GetProperty("republish").GetProperty("dest").GetString());
            using var update = await RequestAsync(c, "$JS.API.STREAM.UPDATE.RP", """{"name":"RP","subjects":["rp.*"],"storage":"memory","republish":{"src":">","dest":"other.>"}}""");
            AssertError(update, 500, 10052, "stream configuration update can not change RePublish");
        });
    }

    [Fact]
    public async Task Stream_info_lists_subjects_matching_subjects_filter_and_the_deleted_sequences_when_asked()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.I", """{"name":"I","subjects":["i.>"],"storage":"memory"}""")) { }
            await c.SendAsync("PUB i.a.1 1\r\n1\r\nPUB i.a.2 1\r\n2\r\nPUB i.a.1 1\r\n3\r\nPUB i.b.1 1\r\n4\r\nPUB i.a.3 1\r\n5\r\nPUB i.a.3 1\r\n6\r\n");
            await c.PingPongAsync();
            using (var deleted = await RequestAsync(c, "$JS.API.STREAM.MSG.DELETE.I", """{"seq":2}""")) { Assert.True(deleted.RootElement.GetProperty("success").GetBoolean()); }
            using (var deleted = await RequestAsync(c, "$JS.API.STREAM.MSG.DELETE.I", """{"seq":4,"no_erase":true}""")) { Assert.True(deleted.RootElement.GetProperty("success").GetBoolean()); }

            using (var plain = await RequestAsync(c, "$JS.API.STREAM.INFO.I", ""))
            {
                var state = plain.RootElement.GetProperty("state");
                Assert.Equal(2, state.GetProperty("num_deleted").GetInt32());
                Assert.False(state.TryGetProperty("deleted", out _));
                Assert.False(state.TryGetProperty("subjects", out _));
                Assert.Equal((0, 0, 0), Paging(plain));
            }

            using (var detailed = await RequestAsync(c, "$JS.API.STREAM.INFO.I", """{"deleted_details":true,"subjects_filter":"i.a.*"}"""))
            {
                var state = detailed.RootElement.GetProperty("state");
                Assert.Equal([2UL, 4UL], state.GetProperty("deleted").EnumerateArray().Select(e => e.GetUInt64()));
                Assert.Equal(
                    [("i.a.1", 2UL), ("i.a.3", 2UL)],
                    state.GetProperty("subjects").EnumerateObject().Select(p => (p.Name, p.Value.GetUInt64())).OrderBy(p => p.Name, StringComparer.Ordinal));
                Assert.Equal((2, 0, 100_000), Paging(detailed));
            }

            using (var paged = await RequestAsync(c, "$JS.API.STREAM.INFO.I", """{"subjects_filter":">","offset":1}"""))
            {
                var subjects = paged.RootElement.GetProperty("state").GetProperty("subjects").EnumerateObject().Select(p => p.Name).Order(StringComparer.Ordinal);
                Assert.Equal(["i.a.3"], subjects);
                Assert.Equal((2, 1, 100_000), Paging(paged));
            }

            using var none = await RequestAsync(c, "$JS.API.STREAM.INFO.I", """{"subjects_filter":"nothing.here"}""");
            Assert.False(none.RootElement.GetProperty("state").TryGetProperty("subjects", out _));
        });
    }

    [Fact]
    public async Task Stream_names_filter_by_subject_and_an_empty_subject_lists_every_stream()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.NA", """{"name":"NA","subjects":["na.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.NB", """{"name":"NB","subjects":["nb.x","nb.y"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.NC", """{"name":"NC","storage":"memory"}""")) { }

            async Task<string[]> NamesAsync(string body)
            {
                using var reply = await RequestAsync(c, "$JS.API.STREAM.NAMES", body);
                var streams = reply.RootElement.GetProperty("streams"); // nats-server sends null for none
                return streams.ValueKind == JsonValueKind.Null ? [] : [.. streams.EnumerateArray().Select(e => e.GetString()!).Order(StringComparer.Ordinal)];
            }

            Assert.Equal(["NA", "NB", "NC"], await NamesAsync(""));
            Assert.Equal(["NA", "NB", "NC"], await NamesAsync("""{"subject":""}"""));
            Assert.Equal(["NA"], await NamesAsync("""{"subject":"na.one.two"}"""));
            Assert.Equal(["NA"], await NamesAsync("""{"subject":"*.one"}""")); // overlaps na.> though neither holds the other
            Assert.Equal(["NB"], await NamesAsync("""{"subject":"nb.*"}"""));
            Assert.Equal(["NC"], await NamesAsync("""{"subject":"NC"}"""));
            Assert.Equal(["NA", "NB", "NC"], await NamesAsync("""{"subject":">"}"""));
            Assert.Empty(await NamesAsync("""{"subject":"none"}"""));
        });
    }

    [Fact]
    public async Task Account_info_counts_the_api_answers_sent_before_it_and_the_errors_among_them()
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (var first = await RequestAsync(c, "$JS.API.INFO", ""))
            {
                Assert.Equal((0L, 0L), ApiCounts(first));
            }

            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a.>"],"storage":"memory"}""")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.INFO.A", "")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.INFO.MISSING", "")) { }
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.A", """{"name":"A","subjects":["a.>"],"storage":"memory","sealed":true}""")) { }
            using (await RequestAsync(c, "$JS.API.CONSUMER.INFO.A.NOPE", "")) { }

            // Pull requests are no API answers.
            await c.SendAsync("SUB _INBOX.pull 9\r\n");
            using (await RequestAsync(c, "$JS.API.CONSUMER.DURABLE.CREATE.A.D", """{"stream_name":"A","config":{"durable_name":"D","ack_policy":"explicit"}}""")) { }
            await c.SendAsync("PUB $JS.API.CONSUMER.MSG.NEXT.A.D _INBOX.pull 16\r\n{\"no_wait\":true}\r\n");
            var status = await c.ExpectMsgAsync();
            Assert.Equal("_INBOX.pull", status.Subject);

            // The previous account info counts; this one does not count itself.
            using var info = await RequestAsync(c, "$JS.API.INFO", "");
            Assert.Equal((7L, 3L), ApiCounts(info));
        });
    }

    [Fact]
    public async Task A_jetstream_domain_serves_its_api_subjects_as_well_and_names_itself_in_answers_and_pub_acks()
    {
        await _server.WithJetStreamAsync(
            async server =>
            {
                await using var c = await ConnectAsync(server);
                using (var info = await RequestAsync(c, "$JS.hub.API.INFO", ""))
                {
                    Assert.Equal("hub", info.RootElement.GetProperty("domain").GetString());
                }

                using (var created = await RequestAsync(c, "$JS.hub.API.STREAM.CREATE.D", """{"name":"D","subjects":["d.>"],"storage":"memory"}"""))
                {
                    Assert.Equal("D", created.RootElement.GetProperty("config").GetProperty("name").GetString());
                }

                using (var ack = await RequestAsync(c, "d.one", "x"))
                {
                    Assert.Equal(("D", "hub", 1UL), (ack.RootElement.GetProperty("stream").GetString(), ack.RootElement.GetProperty("domain").GetString(), ack.RootElement.GetProperty("seq").GetUInt64()));
                }

                using (var info = await RequestAsync(c, "$JS.API.STREAM.INFO.D", ""))
                {
                    Assert.Equal("hub", info.RootElement.GetProperty("domain").GetString());
                    Assert.Equal(1UL, info.RootElement.GetProperty("state").GetProperty("messages").GetUInt64());
                }

                // Consumers and pull requests through the domain's prefix.
                using (await RequestAsync(c, "$JS.hub.API.CONSUMER.DURABLE.CREATE.D.C", """{"stream_name":"D","config":{"durable_name":"C","ack_policy":"explicit"}}""")) { }
                await c.SendAsync("SUB _INBOX.pull 9\r\nPUB $JS.hub.API.CONSUMER.MSG.NEXT.D.C _INBOX.pull 11\r\n{\"batch\":1}\r\n");
                var m = await c.ExpectMsgAsync();
                Assert.Equal(("d.one", "x"), (m.Subject, m.PayloadText));
            },
            "jetstream { domain: hub }\n");
    }

    [Theory]
    [InlineData("memory", 26UL, 3UL, 3UL)] // a message counts subject + headers + payload + 16 in a memory store
    [InlineData("file", 40UL, 2UL, 2UL)]   // + 30 in a file store
    public async Task Stream_bytes_count_a_message_as_nats_servers_store_does_so_max_bytes_bites_at_the_same_message(string storage, ulong oneMessage, ulong keptByDiscardNew, ulong keptByDiscardOld)
    {
        await _server.WithJetStreamAsync(async server =>
        {
            await using var c = await ConnectAsync(server);
            using (await RequestAsync(c, "$JS.API.STREAM.CREATE.B", $$"""{"name":"B","subjects":["b.one"],"storage":"{{storage}}"}""")) { }
            using (await RequestAsync(c, "b.one", "hello")) { }
            using (var info = await RequestAsync(c, "$JS.API.STREAM.INFO.B", ""))
            {
                Assert.Equal(oneMessage, info.RootElement.GetProperty("state").GetProperty("bytes").GetUInt64());
            }

            // Discard new refuses once the bytes plus the new payload reach max_bytes, but what it lets in may still take
            // the total over (subject and overhead), and nats-server 2.9.10 then drops the oldest, as discard old does.
            foreach (var (name, discard, kept) in new[] { ("BN", "new", keptByDiscardNew), ("BO", "old", keptByDiscardOld) })
            {
                var subject = name.ToLowerInvariant();
                using (await RequestAsync(c, $"$JS.API.STREAM.CREATE.{name}", $$"""{"name":"{{name}}","subjects":["{{subject}}"],"storage":"{{storage}}","max_bytes":100,"discard":"{{discard}}"}""")) { }
                for (var i = 0; i < 6; i++)
                {
                    using (await RequestAsync(c, subject, "0123456789")) { }
                }

                using var info = await RequestAsync(c, $"$JS.API.STREAM.INFO.{name}", "");
                var state = info.RootElement.GetProperty("state");
                Assert.Equal((kept, 7 - kept), (state.GetProperty("messages").GetUInt64(), state.GetProperty("first_seq").GetUInt64())); // the last ones
            }
        });
    }

    /// <summary>Asks STREAM.INFO until <paramref name="done"/> holds, up to 20 s (nats-server retries a missing origin every few seconds).</summary>
    private static async Task<JsonElement> PollInfoAsync(WireClient c, string stream, Func<JsonElement, bool> done)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(20);
        while (true)
        {
            using var info = await RequestAsync(c, $"$JS.API.STREAM.INFO.{stream}", "");
            if (done(info.RootElement) || DateTime.UtcNow > deadline)
            {
                return info.RootElement.Clone();
            }

            await Task.Delay(100);
        }
    }

    private static (long Total, long Errors) ApiCounts(JsonDocument info)
    {
        var api = info.RootElement.GetProperty("api");
        return (api.GetProperty("total").GetInt64(), api.GetProperty("errors").GetInt64());
    }

    private static (int Total, int Offset, int Limit) Paging(JsonDocument info) =>
        (info.RootElement.GetProperty("total").GetInt32(), info.RootElement.GetProperty("offset").GetInt32(), info.RootElement.GetProperty("limit").GetInt32());

    private static void AssertError(JsonDocument reply, int status, int code, string description)
    {
        Assert.True(reply.RootElement.TryGetProperty("error", out var error), reply.RootElement.ToString());
        Assert.Equal((status, code, description), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
    }

    private static void AssertHeaders(WireMessage m, params (string Name, string Value)[] expected)
    {
        var lines = m.HeaderText.Split("\r\n");
        Assert.StartsWith("NATS/1.0", lines[0], StringComparison.Ordinal);
        foreach (var (name, value) in expected)
        {
            Assert.Contains($"{name}: {value}", lines);
        }
    }

    private static Task<WireClient> ConnectAsync(ServerProcess server) => JetStreamApiWire.ConnectAsync(server);

    private static Task<JsonDocument> RequestAsync(WireClient c, string subject, string body) => JetStreamApiWire.RequestAsync(c, subject, body);
}

[Trait("server", "nats-server")]
public sealed class JetStreamStreamRulesTests_NatsServer(NatsServerFixture server) : JetStreamStreamRulesTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class JetStreamStreamRulesTests_Courier(CourierFixture server) : JetStreamStreamRulesTests<CourierFixture>(server);
