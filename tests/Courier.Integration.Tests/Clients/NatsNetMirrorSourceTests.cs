using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;
using static Courier.Integration.Tests.Clients.StreamCopies;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// Mirror and sources streams through the official .NET client (NATS.Client.JetStream): a mirror
/// keeps its origin's messages at the origin's sequences and follows it; a sources stream gathers
/// the messages of several streams through their filters, each with nats-server's
/// <c>Nats-Stream-Source</c> header; both resume where they left off after a restart.
/// </summary>
public abstract class NatsNetMirrorSourceTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private readonly TServer _server;

    protected NatsNetMirrorSourceTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task A_mirror_copies_its_origin_at_the_same_sequences_and_follows_what_arrives_later() =>
        WithJetStreamAsync(async (nats, js, p, ct) =>
        {
            var origin = NatsNetClient.NameFor(p) + "_O";
            var mirror = NatsNetClient.NameFor(p) + "_M";
            var stream = await js.CreateStreamAsync(new StreamConfig(origin, [$"{p}.>"]), ct);
            foreach (var key in new[] { "a", "b", "c", "d", "e" })
            {
                (await js.PublishAsync($"{p}.{key}", $"value {key}", cancellationToken: ct)).EnsureSuccess();
            }

            await stream.DeleteMessageAsync(new StreamMsgDeleteRequest { Seq = 3, NoErase = true }, ct);

            var created = await js.CreateStreamAsync(new StreamConfig { Name = mirror, Mirror = new StreamSource { Name = origin } }, ct);
            Assert.True(created.Info.Config.Subjects is null or { Count: 0 });

            // The existing messages, with the origin's gap at 3.
            var info = await WaitForAsync(js, mirror, i => i.State.LastSeq == 5, ct);
            Assert.Equal((4L, 1UL, 5UL), (info.State.Messages, info.State.FirstSeq, info.State.LastSeq));
            var copied = await js.GetStreamAsync(mirror, cancellationToken: ct);
            var fourth = await copied.GetAsync(new StreamMsgGetRequest { Seq = 4 }, ct);
            Assert.Equal($"{p}.d", fourth.Message.Subject);

            // Then what arrives later.
            (await js.PublishAsync($"{p}.f", "value f", cancellationToken: ct)).EnsureSuccess();
            (await js.PublishAsync($"{p}.g", "value g", cancellationToken: ct)).EnsureSuccess();
            info = await WaitForAsync(js, mirror, i => i.State.LastSeq == 7, ct);
            Assert.Equal(6L, info.State.Messages);
            Assert.Equal($"{p}.g", (await copied.GetAsync(new StreamMsgGetRequest { Seq = 7 }, ct)).Message.Subject);

            // A mirror takes no publishes of its own: nothing listens on its name.
            await Assert.ThrowsAsync<NatsNoRespondersException>(async () => await nats.RequestAsync<string, string>(mirror, "direct", cancellationToken: ct));
        });

    [Fact]
    public Task A_sources_stream_gathers_two_filtered_streams_and_its_own_subjects_with_the_stream_source_header() =>
        WithJetStreamAsync(async (_, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name + "_A", [$"{p}.a.*"]), ct);
            await js.CreateStreamAsync(new StreamConfig(name + "_B", [$"{p}.b.*"]), ct);
            foreach (var subject in new[] { "a.x", "a.y", "a.x" })
            {
                (await js.PublishAsync($"{p}.{subject}", subject, cancellationToken: ct)).EnsureSuccess();
            }

            foreach (var subject in new[] { "b.y", "b.x" })
            {
                (await js.PublishAsync($"{p}.{subject}", subject, cancellationToken: ct)).EnsureSuccess();
            }

            await js.CreateStreamAsync(new StreamConfig(name + "_S", [$"{p}.s.*"])
            {
                Sources = [new StreamSource { Name = name + "_A", FilterSubject = $"{p}.a.x" }, new StreamSource { Name = name + "_B", FilterSubject = $"{p}.b.x" }],
            }, ct);
            (await js.PublishAsync($"{p}.s.own", "own", cancellationToken: ct)).EnsureSuccess();
            await WaitForAsync(js, name + "_S", i => i.State.Messages == 4, ct);

            (await js.PublishAsync($"{p}.a.x", "later", cancellationToken: ct)).EnsureSuccess();
            (await js.PublishAsync($"{p}.a.y", "filtered out", cancellationToken: ct)).EnsureSuccess();
            var info = await WaitForAsync(js, name + "_S", i => i.State.Messages == 5, ct);
            Assert.Equal(5UL, info.State.LastSeq);

            var seen = await ReadAllAsync(js, name + "_S", 5, ct);
            Assert.Equal(
                new[] { ($"{p}.a.x", $"{name}_A 1"), ($"{p}.a.x", $"{name}_A 3"), ($"{p}.a.x", $"{name}_A 4"), ($"{p}.b.x", $"{name}_B 2"), ($"{p}.s.own", "") }.Order(),
                seen.Select(m => (m.Subject, m.Source)).Order());
        });

    [Fact]
    public Task A_mirror_and_a_source_with_opt_start_seq_begin_at_that_origin_sequence() =>
        WithJetStreamAsync(async (_, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
            for (var i = 1; i <= 5; i++)
            {
                (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
            }

            await js.CreateStreamAsync(new StreamConfig { Name = name + "_M", Mirror = new StreamSource { Name = name, OptStartSeq = 3 } }, ct);
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_S", Sources = [new StreamSource { Name = name, OptStartSeq = 4 }] }, ct);

            var mirror = await WaitForAsync(js, name + "_M", i => i.State.LastSeq == 5, ct);
            Assert.Equal((3L, 3UL), (mirror.State.Messages, mirror.State.FirstSeq));
            await WaitForAsync(js, name + "_S", i => i.State.Messages == 2, ct);
            var sourced = await ReadAllAsync(js, name + "_S", 2, ct);
            Assert.Equal([$"{name} 4", $"{name} 5"], sourced.Select(m => m.Source));
        });

    [Fact]
    public Task Stream_info_reports_the_mirror_and_each_source_by_name_with_lag_and_activity() =>
        WithJetStreamAsync(async (_, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name + "_A", [$"{p}.a"]), ct);
            await js.CreateStreamAsync(new StreamConfig(name + "_B", [$"{p}.b"]), ct);
            (await js.PublishAsync($"{p}.a", "x", cancellationToken: ct)).EnsureSuccess();
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_M", Mirror = new StreamSource { Name = name + "_A" } }, ct);
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_S", Sources = [new StreamSource { Name = name + "_A" }, new StreamSource { Name = name + "_B" }] }, ct);

            var mirror = await WaitForAsync(js, name + "_M", i => i.State.Messages == 1 && i.Mirror is { Active: { } active } && active >= TimeSpan.Zero, ct);
            Assert.Equal((name + "_A", 0L), (mirror.Mirror!.Name, mirror.Mirror.Lag));
            Assert.Null(mirror.Sources);

            var sources = await WaitForAsync(js, name + "_S", i => i.State.Messages == 1 && i.Sources is { Count: 2 } s && s.All(x => x.Active is { } active && active >= TimeSpan.Zero), ct);
            Assert.Equal([name + "_A", name + "_B"], sources.Sources!.Select(s => s.Name).Order());
            Assert.All(sources.Sources!, s => Assert.Equal(0L, s.Lag));
            Assert.Null(sources.Mirror);
        });

    [Fact]
    public Task A_mirror_of_a_mirror_follows_too_and_an_update_adds_a_source() =>
        WithJetStreamAsync(async (_, js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name + "_A", [$"{p}.a"]), ct);
            await js.CreateStreamAsync(new StreamConfig(name + "_B", [$"{p}.b"]), ct);
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_M", Mirror = new StreamSource { Name = name + "_A" } }, ct);
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_MM", Mirror = new StreamSource { Name = name + "_M" } }, ct);
            await js.CreateStreamAsync(new StreamConfig { Name = name + "_S", Sources = [new StreamSource { Name = name + "_A" }] }, ct);
            (await js.PublishAsync($"{p}.a", "a1", cancellationToken: ct)).EnsureSuccess();
            (await js.PublishAsync($"{p}.b", "b1", cancellationToken: ct)).EnsureSuccess();

            await WaitForAsync(js, name + "_MM", i => i.State.LastSeq == 1, ct);
            await WaitForAsync(js, name + "_S", i => i.State.Messages == 1, ct);

            await js.UpdateStreamAsync(new StreamConfig { Name = name + "_S", Sources = [new StreamSource { Name = name + "_A" }, new StreamSource { Name = name + "_B" }] }, ct);
            (await js.PublishAsync($"{p}.a", "a2", cancellationToken: ct)).EnsureSuccess();
            await WaitForAsync(js, name + "_MM", i => i.State.LastSeq == 2, ct);
            await WaitForAsync(js, name + "_S", i => i.State.Messages == 3, ct);
            var sourced = await ReadAllAsync(js, name + "_S", 3, ct);
            Assert.Equal([$"{name}_A 1", $"{name}_A 2", $"{name}_B 1"], sourced.Select(m => m.Source).Order());
        });

    [Fact]
    public Task A_key_value_bucket_mirroring_another_holds_its_latest_values_and_follows_later_puts() =>
        WithJetStreamAsync(async (_, js, p, ct) =>
        {
            var bucket = NatsNetClient.NameFor(p);
            var buckets = new NatsKVContext(js);
            var origin = await buckets.CreateStoreAsync(new NatsKVConfig(bucket) { History = 3 }, ct);
            await origin.PutAsync("colour", "red", cancellationToken: ct);
            await origin.PutAsync("size", "small", cancellationToken: ct);

            // NATS.Net makes the mirror bucket's stream mirror KV_<origin>, with direct gets.
            await buckets.CreateStoreAsync(new NatsKVConfig(bucket + "_copy") { Mirror = new StreamSource { Name = bucket } }, ct);
            await origin.PutAsync("colour", "green", cancellationToken: ct);

            // The copy keeps one value per key (history 1): colour's first value is gone, at the origin's sequences.
            var info = await WaitForAsync(js, $"KV_{bucket}_copy", i => i.State.LastSeq == 3, ct);
            Assert.Equal((2L, 2UL), (info.State.Messages, info.State.FirstSeq));
            var copy = await js.GetStreamAsync($"KV_{bucket}_copy", cancellationToken: ct);
            var colour = await copy.GetDirectAsync<string>(new StreamMsgGetRequest { LastBySubj = $"$KV.{bucket}.colour" }, cancellationToken: ct);
            Assert.Equal("green", colour.Data);
            var size = await copy.GetDirectAsync<string>(new StreamMsgGetRequest { LastBySubj = $"$KV.{bucket}.size" }, cancellationToken: ct);
            Assert.Equal("small", size.Data);
        });

    [Fact]
    public Task After_a_restart_a_mirror_and_a_sources_stream_resume_without_copying_anything_twice() =>
        NatsNetClient.AcrossRestartAsync(
            _server,
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                await js.CreateStreamAsync(new StreamConfig { Name = name + "_M", Mirror = new StreamSource { Name = name } }, ct);
                await js.CreateStreamAsync(new StreamConfig { Name = name + "_S", Sources = [new StreamSource { Name = name }] }, ct);
                for (var i = 1; i <= 3; i++)
                {
                    (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
                }

                await WaitForAsync(js, name + "_M", i => i.State.LastSeq == 3, ct);
                await WaitForAsync(js, name + "_S", i => i.State.Messages == 3, ct);
            },
            async (_, js, p, ct) =>
            {
                var name = NatsNetClient.NameFor(p);
                for (var i = 4; i <= 5; i++)
                {
                    (await js.PublishAsync($"{p}.n", i, cancellationToken: ct)).EnsureSuccess();
                }

                var mirror = await WaitForAsync(js, name + "_M", i => i.State.LastSeq == 5, ct);
                Assert.Equal((5L, 1UL), (mirror.State.Messages, mirror.State.FirstSeq));
                await WaitForAsync(js, name + "_S", i => i.State.Messages >= 5, ct);

                var sourced = await ReadAllAsync(js, name + "_S", 5, ct);
                Assert.Equal([1, 2, 3, 4, 5], sourced.Select(m => int.Parse(m.Data!, System.Globalization.CultureInfo.InvariantCulture)));
                Assert.Equal(Enumerable.Range(1, 5).Select(i => $"{name} {i}"), sourced.Select(m => m.Source));
                var again = (await js.GetStreamAsync(name + "_S", cancellationToken: ct)).Info;
                Assert.Equal(5L, again.State.Messages); // nothing copied twice
            });

    private Task WithJetStreamAsync(Func<NatsConnection, NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(_server, test);
}

[Trait("server", "nats-server")]
public sealed class NatsNetMirrorSourceTests_NatsServer(NatsServerFixture server) : NatsNetMirrorSourceTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetMirrorSourceTests_Courier(CourierFixture server) : NatsNetMirrorSourceTests<CourierFixture>(server);
