using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using static Courier.Integration.Tests.Clients.StreamCopies;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// Mirrors and sources as nats-server 2.9 has them beyond copying: <c>mirror_direct</c> (a mirror
/// of a stream that allows direct gets answers the origin's direct gets too, in the origin's queue
/// group) and <c>external</c> origins (the prefixes checked, and printed in the configuration and
/// STREAM.INFO as nats-server prints them).
/// </summary>
public abstract class NatsNetSourceFidelityTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsNetSourceFidelityTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task A_mirror_of_a_stream_with_direct_gets_answers_the_origins_direct_gets_beside_it_and_after_it_is_gone() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig("O", [$"{p}.o.>"]) { AllowDirect = true, Storage = StreamConfigStorage.Memory }, ct);
            await js.CreateStreamAsync(new StreamConfig("P", [$"{p}.p.>"]) { Storage = StreamConfigStorage.Memory }, ct);
            foreach (var (subject, value) in new[] { ("o.a", "1"), ("o.b", "2"), ("o.a", "3"), ("p.a", "4") })
            {
                (await js.PublishAsync($"{p}.{subject}", value, cancellationToken: ct)).EnsureSuccess();
            }

            // The mirror inherits mirror_direct from its origin's allow_direct, whatever the request said.
            var m = await js.CreateStreamAsync(new StreamConfig { Name = "M", Mirror = new StreamSource { Name = "O" }, Storage = StreamConfigStorage.Memory }, ct);
            Assert.True(m.Info.Config.MirrorDirect);
            var n = await js.CreateStreamAsync(new StreamConfig { Name = "N", Mirror = new StreamSource { Name = "P" }, MirrorDirect = true, Storage = StreamConfigStorage.Memory }, ct);
            Assert.False(n.Info.Config.MirrorDirect);
            await WaitForAsync(js, "M", i => i.State.Messages == 3, ct);
            await WaitForAsync(js, "N", i => i.State.Messages == 1, ct);

            // Both answer the origin's direct gets, one per request (a queue group): over 40 requests each is seen.
            var answeredBy = new HashSet<string>();
            for (var i = 0; i < 40; i++)
            {
                var reply = await nats.RequestAsync<string, string>("$JS.API.DIRECT.GET.O", """{"seq":2}""", cancellationToken: ct);
                Assert.Equal("2", reply.Data);
                answeredBy.Add(reply.Headers!["Nats-Stream"].ToString());
            }

            Assert.Equal(["M", "O"], answeredBy.Order());

            // With the origin gone the mirror still answers, from its own store: by sequence, and last by subject.
            await js.DeleteStreamAsync("O", ct);
            var bySeq = await nats.RequestAsync<string, string>("$JS.API.DIRECT.GET.O", """{"seq":3}""", cancellationToken: ct);
            Assert.Equal(("3", "M", $"{p}.o.a", "3"), (bySeq.Data, bySeq.Headers!["Nats-Stream"].ToString(), bySeq.Headers["Nats-Subject"].ToString(), bySeq.Headers["Nats-Sequence"].ToString()));
            var last = await nats.RequestAsync<string, string>($"$JS.API.DIRECT.GET.O.{p}.o.b", null, cancellationToken: ct);
            Assert.Equal(("2", "2"), (last.Data, last.Headers!["Nats-Sequence"].ToString()));
            var missing = await nats.RequestAsync<string, string>("$JS.API.DIRECT.GET.O", """{"seq":9}""", cancellationToken: ct);
            Assert.Equal(404, missing.Headers!.Code);

            // A mirror of a stream without direct gets does not answer for it (the JetStream API's own
            // subscription takes the request and answers nothing: no reply, rather than no responders).
            await js.DeleteStreamAsync("P", ct);
            await Assert.ThrowsAsync<NatsNoReplyException>(async () =>
                await nats.RequestAsync<string, string>("$JS.API.DIRECT.GET.P", """{"seq":1}""", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2) }, cancellationToken: ct));
        });

    [Fact]
    public Task External_prefixes_are_checked_and_printed_in_the_configuration_and_stream_info_as_nats_server_prints_them() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            using (var origin = await RequestAsync(nats, "$JS.API.STREAM.CREATE.O", $$"""{"name":"O","subjects":["{{p}}.>"],"storage":"memory"}""", ct))
            {
                Assert.False(origin.RootElement.TryGetProperty("error", out _), origin.RootElement.ToString());
            }

            async Task AssertRefusedAsync(string config, int status, int code, string description)
            {
                using var reply = await RequestAsync(nats, "$JS.API.STREAM.CREATE.S", config, ct);
                Assert.True(reply.RootElement.TryGetProperty("error", out var error), reply.RootElement.ToString());
                Assert.Equal((status, code, description), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32(), error.GetProperty("description").GetString()));
            }

            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","external":{"api":"$JS.API"}}]}""",
                400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API");
            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","external":{"api":"$JS.*.API"}}]}""",
                500, 10052, "stream external api prefix \"$JS.*.API\" must be a valid subject without wildcards");
            await AssertRefusedAsync("""{"name":"S","storage":"memory","mirror":{"name":"O","external":{"api":"$JS.far.API","deliver":"dlv.>"}}}""",
                400, 10024, "stream external delivery prefix dlv.> must not contain wildcards");

            // Within the rules: the configuration holds both prefixes, the empty one too, and so does STREAM.INFO's entry.
            using (var created = await RequestAsync(nats, "$JS.API.STREAM.CREATE.S", """{"name":"S","storage":"memory","sources":[{"name":"O","external":{"api":"$JS.far.API"}}]}""", ct))
            {
                Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
                var echoed = created.RootElement.GetProperty("config").GetProperty("sources")[0].GetProperty("external");
                Assert.Equal(("$JS.far.API", ""), (echoed.GetProperty("api").GetString(), echoed.GetProperty("deliver").GetString()));
            }

            using (var created = await RequestAsync(nats, "$JS.API.STREAM.CREATE.M", """{"name":"M","storage":"memory","mirror":{"name":"O","external":{"api":"$JS.far.API","deliver":"dlv.m"}}}""", ct))
            {
                Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
            }

            using var sources = await RequestAsync(nats, "$JS.API.STREAM.INFO.S", "", ct);
            var source = sources.RootElement.GetProperty("sources")[0];
            Assert.Equal("O", source.GetProperty("name").GetString());
            Assert.Equal(("$JS.far.API", ""), (source.GetProperty("external").GetProperty("api").GetString(), source.GetProperty("external").GetProperty("deliver").GetString()));
            using var mirror = await RequestAsync(nats, "$JS.API.STREAM.INFO.M", "", ct);
            var external = mirror.RootElement.GetProperty("mirror").GetProperty("external");
            Assert.Equal(("$JS.far.API", "dlv.m"), (external.GetProperty("api").GetString(), external.GetProperty("deliver").GetString()));
        });

    [Fact]
    public async Task An_external_source_and_mirror_in_another_account_copy_through_its_imported_api_with_the_prefix_hash_in_the_source_header()
    {
        // Account A exports its JetStream API and the delivery subjects; B imports the API under $JS.A.API.
        const string Config = """
            accounts {
              A: { jetstream: enabled, users: [{user: a, password: a}], exports: [{service: "$JS.API.>"}, {stream: "deliver.>"}] }
              B: { jetstream: enabled, users: [{user: b, password: b}], imports: [{service: {account: A, subject: "$JS.API.>"}, to: "$JS.A.API.>"}, {stream: {account: A, subject: "deliver.>"}}] }
            }
            """;
        await _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                var ct = cts.Token;
                var p = Subjects.NewPrefix();
                await using var a = await Accounts.AccountConfig.ConnectAsync(server.Url, "a");
                await using var b = await Accounts.AccountConfig.ConnectAsync(server.Url, "b");
                var inA = new NatsJSContext(a);
                var inB = new NatsJSContext(b);
                await inA.CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]) { Storage = StreamConfigStorage.Memory }, ct);
                (await inA.PublishAsync($"{p}.a", "one", cancellationToken: ct)).EnsureSuccess();
                foreach (var (name, config) in new[]
                {
                    ("S", """{"name":"S","storage":"memory","sources":[{"name":"O","external":{"api":"$JS.A.API","deliver":"deliver.s"}}]}"""),
                    ("M", """{"name":"M","storage":"memory","mirror":{"name":"O","external":{"api":"$JS.A.API","deliver":"deliver.m"}}}"""),
                })
                {
                    using var created = await RequestAsync(b, $"$JS.API.STREAM.CREATE.{name}", config, ct);
                    Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
                }

                (await inA.PublishAsync($"{p}.b", "two", cancellationToken: ct)).EnsureSuccess();
                var mirror = await WaitForAsync(inB, "M", i => i.State.LastSeq == 2 && i.Mirror is { Active: { } active } && active >= TimeSpan.Zero, ct);
                Assert.Equal(2L, mirror.State.Messages);
                await WaitForAsync(inB, "S", i => i.State.Messages == 2, ct);

                // nats-server names an external source "<stream>:<8-character hash of the API prefix>" in the header.
                var consumer = await inB.CreateOrUpdateConsumerAsync("S", new ConsumerConfig { AckPolicy = ConsumerConfigAckPolicy.None }, ct);
                var headers = new List<(string Subject, string Source)>();
                await foreach (var m in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 2, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    headers.Add((m.Subject, m.Headers!["Nats-Stream-Source"].ToString()));
                }

                Assert.Equal([($"{p}.a", "O:z0zeNTHp 1"), ($"{p}.b", "O:z0zeNTHp 2")], headers);
            },
            Config);
    }

    [Fact]
    public async Task After_a_restart_an_external_source_in_another_account_resumes_after_its_last_header_without_copying_twice()
    {
        const string Config = """
            accounts {
              A: { jetstream: enabled, users: [{user: a, password: a}], exports: [{service: "$JS.API.>"}, {stream: "deliver.>"}] }
              B: { jetstream: enabled, users: [{user: b, password: b}], imports: [{service: {account: A, subject: "$JS.API.>"}, to: "$JS.A.API.>"}, {stream: {account: A, subject: "deliver.>"}}] }
            }
            """;
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var ct = cts.Token;
        var storeDir = Directory.CreateTempSubdirectory("courier-js-").FullName;
        try
        {
            var p = Subjects.NewPrefix();
            await using (var server = await _server.StartServerAsync(Config, "-js", "-sd", storeDir))
            {
                await using var a = await Accounts.AccountConfig.ConnectAsync(server.Url, "a");
                await using var b = await Accounts.AccountConfig.ConnectAsync(server.Url, "b");
                await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]), ct);
                using (var created = await RequestAsync(b, "$JS.API.STREAM.CREATE.S", """{"name":"S","sources":[{"name":"O","external":{"api":"$JS.A.API","deliver":"deliver.s"}}]}""", ct))
                {
                    Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
                }

                for (var i = 1; i <= 2; i++)
                {
                    (await new NatsJSContext(a).PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
                }

                await WaitForAsync(new NatsJSContext(b), "S", i => i.State.Messages == 2, ct);
                await server.SignalAsync("TERM");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            await using (var server = await _server.StartServerAsync(Config, "-js", "-sd", storeDir))
            {
                await using var a = await Accounts.AccountConfig.ConnectAsync(server.Url, "a");
                await using var b = await Accounts.AccountConfig.ConnectAsync(server.Url, "b");
                (await new NatsJSContext(a).PublishAsync($"{p}.n", 3, cancellationToken: ct)).EnsureSuccess();
                var inB = new NatsJSContext(b);
                await WaitForAsync(inB, "S", i => i.State.Messages >= 3, ct);
                var consumer = await inB.CreateOrUpdateConsumerAsync("S", new ConsumerConfig { AckPolicy = ConsumerConfigAckPolicy.None }, ct);
                var sources = new List<string>();
                await foreach (var m in consumer.FetchAsync<int>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    sources.Add(m.Headers!["Nats-Stream-Source"].ToString());
                }

                Assert.Equal(["O:z0zeNTHp 1", "O:z0zeNTHp 2", "O:z0zeNTHp 3"], sources);
                Assert.Equal(3L, (await inB.GetStreamAsync("S", cancellationToken: ct)).Info.State.Messages); // nothing copied twice
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task An_external_source_through_the_servers_own_domain_api_copies_nothing_as_on_nats_server_2_9()
    {
        await _server.WithJetStreamAsync(
            async server =>
            {
                using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
                var ct = cts.Token;
                var p = Subjects.NewPrefix();
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]) { Storage = StreamConfigStorage.Memory }, ct);
                (await js.PublishAsync($"{p}.a", "one", cancellationToken: ct)).EnsureSuccess();
                using (var created = await RequestAsync(nats, "$JS.API.STREAM.CREATE.S", """{"name":"S","storage":"memory","sources":[{"name":"O","external":{"api":"$JS.hub.API"}}]}""", ct))
                {
                    Assert.False(created.RootElement.TryGetProperty("error", out _), created.RootElement.ToString());
                }

                // A local source of the same origin, created after it, has copied the message: the external one has had its chance.
                await js.CreateStreamAsync(new StreamConfig { Name = "L", Sources = [new StreamSource { Name = "O" }], Storage = StreamConfigStorage.Memory }, ct);
                await WaitForAsync(js, "L", i => i.State.Messages == 1, ct);
                using var info = await RequestAsync(nats, "$JS.API.STREAM.INFO.S", "", ct);
                Assert.Equal(0UL, info.RootElement.GetProperty("state").GetProperty("messages").GetUInt64());
                var source = info.RootElement.GetProperty("sources")[0];
                Assert.Equal((-1L, false), (source.GetProperty("active").GetInt64(), source.TryGetProperty("error", out _)));
            },
            "jetstream { domain: hub }\n");
    }

    private Task WithJetStreamAsync(Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(_server, test);
}

[Trait("server", "nats-server")]
public sealed class NatsNetSourceFidelityTests_NatsServer(NatsServerFixture server) : NatsNetSourceFidelityTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetSourceFidelityTests_Courier(CourierFixture server) : NatsNetSourceFidelityTests<CourierFixture>(server);

/// <summary>
/// Courier only: a source's and a mirror's <c>subject_transforms</c> are nats-server 2.10's, and the
/// reference server here is 2.9.10, which ignores the field; these cases follow 2.10's stream.go
/// (checkStreamCfg, processInboundSourceMsg, processInboundMirrorMsg, sourceInfo).
/// </summary>
[Trait("server", "courier")]
public sealed class NatsNetSourceTransformTests(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public Task Each_source_transform_takes_its_subjects_and_maps_them_and_stream_info_prints_them() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig("A", [$"{p}.a.>"]) { Storage = StreamConfigStorage.Memory }, ct);
            await js.CreateStreamAsync(new StreamConfig("B", [$"{p}.b.*"]) { Storage = StreamConfigStorage.Memory }, ct);
            foreach (var subject in new[] { "a.x.1", "a.y.2", "a.z.3", "b.k", "a.x.4" })
            {
                (await js.PublishAsync($"{p}.{subject}", subject, cancellationToken: ct)).EnsureSuccess();
            }

            // From A: a.x.* mapped, a.y.* taken as it is, a.z.* not taken; from B everything, mapped, and a plain filter beside them.
            await js.CreateStreamAsync(new StreamConfig("S", [$"{p}.own"])
            {
                Storage = StreamConfigStorage.Memory,
                Sources =
                [
                    new StreamSource { Name = "A", SubjectTransforms = [new SubjectTransform { Src = $"{p}.a.x.*", Dest = $"{p}.ax.$1" }, new SubjectTransform { Src = $"{p}.a.y.*", Dest = "" }] },
                    new StreamSource { Name = "B", SubjectTransforms = [new SubjectTransform { Src = $"{p}.b.*", Dest = $"{p}.from_b.{{{{wildcard(1)}}}}" }] },
                ],
            }, ct);
            (await js.PublishAsync($"{p}.b.m", "b.m", cancellationToken: ct)).EnsureSuccess();
            await WaitForAsync(js, "S", i => i.State.Messages == 5, ct);

            var read = await ReadAllAsync(js, "S", 5, ct);
            Assert.Equal(
                new (string, string?, string)[] { ($"{p}.ax.1", "a.x.1", "A 1"), ($"{p}.a.y.2", "a.y.2", "A 2"), ($"{p}.ax.4", "a.x.4", "A 4"), ($"{p}.from_b.k", "b.k", "B 1"), ($"{p}.from_b.m", "b.m", "B 2") }.Order(),
                read.Order());

            using var info = await RequestAsync(nats, "$JS.API.STREAM.INFO.S", "", ct);
            var a = info.RootElement.GetProperty("sources").EnumerateArray().Single(s => s.GetProperty("name").GetString() == "A");
            Assert.Equal(0UL, a.GetProperty("lag").GetUInt64());
            Assert.False(a.TryGetProperty("filter_subject", out _));
            Assert.Equal(
                [($"{p}.a.x.*", $"{p}.ax.$1"), ($"{p}.a.y.*", "")],
                a.GetProperty("subject_transforms").EnumerateArray().Select(t => (t.GetProperty("src").GetString(), t.GetProperty("dest").GetString())));
        });

    [Fact]
    public Task Source_and_mirror_transforms_are_refused_as_nats_server_2_10_refuses_them() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]) { Storage = StreamConfigStorage.Memory }, ct);

            async Task AssertRefusedAsync(string config, int status, int code)
            {
                using var reply = await RequestAsync(nats, "$JS.API.STREAM.CREATE.S", config, ct);
                Assert.True(reply.RootElement.TryGetProperty("error", out var error), reply.RootElement.ToString());
                Assert.Equal((status, code), (error.GetProperty("code").GetInt32(), error.GetProperty("err_code").GetInt32()));
            }

            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","filter_subject":"x.a","subject_transforms":[{"src":"x.b","dest":"y.b"}]}]}""", 400, 10144);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","subject_transforms":[{"src":"x.*","dest":"y.$1"},{"src":"x.a","dest":"z"}]}]}""", 400, 10147);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","subject_transforms":[{"src":"x..a","dest":"y"}]}]}""", 400, 10145);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","subject_transforms":[{"src":"x.a","dest":"y..b"}]}]}""", 400, 10146);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","sources":[{"name":"O","subject_transforms":[{"src":"x.*","dest":"y.$2"}]}]}""", 500, 10049);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","mirror":{"name":"O","filter_subject":"x.a","subject_transforms":[{"src":"x.b","dest":"y.b"}]}}""", 400, 10150);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","mirror":{"name":"O","subject_transforms":[{"src":"x.>","dest":"y.>"},{"src":"x.a","dest":"z"}]}}""", 400, 10152);
            await AssertRefusedAsync("""{"name":"S","storage":"memory","mirror":{"name":"O","subject_transforms":[{"src":"","dest":"y.>"}]}}""", 400, 10151);

            using var names = await RequestAsync(nats, "$JS.API.STREAM.NAMES", "", ct);
            Assert.Equal(1, names.RootElement.GetProperty("total").GetInt32()); // none of them was created
        });

    [Fact]
    public Task A_mirror_with_subject_transforms_keeps_the_origin_sequences_under_the_mapped_subjects() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            await js.CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]) { Storage = StreamConfigStorage.Memory }, ct);
            foreach (var subject in new[] { "x.1", "y.2", "x.3", "z.4" })
            {
                (await js.PublishAsync($"{p}.{subject}", subject, cancellationToken: ct)).EnsureSuccess();
            }

            await js.CreateStreamAsync(new StreamConfig
            {
                Name = "M",
                Storage = StreamConfigStorage.Memory,
                Mirror = new StreamSource { Name = "O", SubjectTransforms = [new SubjectTransform { Src = $"{p}.x.*", Dest = $"{p}.mx.$1" }, new SubjectTransform { Src = $"{p}.z.*", Dest = "" }] },
            }, ct);
            var info = await WaitForAsync(js, "M", i => i.State.LastSeq == 4, ct);
            Assert.Equal(3L, info.State.Messages);
            var mirror = await js.GetStreamAsync("M", cancellationToken: ct);
            Assert.Equal($"{p}.mx.1", (await mirror.GetAsync(new StreamMsgGetRequest { Seq = 1 }, ct)).Message.Subject);
            Assert.Equal($"{p}.mx.3", (await mirror.GetAsync(new StreamMsgGetRequest { Seq = 3 }, ct)).Message.Subject);
            Assert.Equal($"{p}.z.4", (await mirror.GetAsync(new StreamMsgGetRequest { Seq = 4 }, ct)).Message.Subject);
        });

    [Fact]
    public async Task A_file_stream_with_source_transforms_resumes_after_a_restart_without_copying_anything_twice()
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        var ct = cts.Token;
        var storeDir = Directory.CreateTempSubdirectory("courier-js-").FullName;
        try
        {
            var p = Subjects.NewPrefix();
            var config = new StreamConfig("S", [])
            {
                Subjects = null,
                Sources = [new StreamSource { Name = "O", SubjectTransforms = [new SubjectTransform { Src = $"{p}.in.*", Dest = $"{p}.out.$1" }] }],
            };
            await using (var process = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(process.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("O", [$"{p}.>"]), ct);
                await js.CreateStreamAsync(config, ct);
                foreach (var subject in new[] { "in.1", "other", "in.2" })
                {
                    (await js.PublishAsync($"{p}.{subject}", subject, cancellationToken: ct)).EnsureSuccess();
                }

                await WaitForAsync(js, "S", i => i.State.Messages == 2, ct);
                await process.SignalAsync("TERM");
                Assert.NotNull(await process.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            await using (var process = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(process.Url);
                var js = new NatsJSContext(nats);
                (await js.PublishAsync($"{p}.in.3", "in.3", cancellationToken: ct)).EnsureSuccess();
                var info = await WaitForAsync(js, "S", i => i.State.Messages >= 3, ct);
                Assert.Equal(3L, info.State.Messages);
                var read = await ReadAllAsync(js, "S", 3, ct);
                Assert.Equal([($"{p}.out.1", "in.1", "O 1"), ($"{p}.out.2", "in.2", "O 3"), ($"{p}.out.3", "in.3", "O 4")], read);
                using var again = await RequestAsync(nats, "$JS.API.STREAM.INFO.S", "", ct);
                Assert.Equal($"{p}.out.$1", again.RootElement.GetProperty("config").GetProperty("sources")[0].GetProperty("subject_transforms")[0].GetProperty("dest").GetString());
            }
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    private Task WithJetStreamAsync(Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(server, test);
}
