using Courier.Integration.Tests.Infrastructure;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Courier.Integration.Tests.Features;

/// <summary>
/// Per-message TTLs (nats-server 2.11, ADR-43: <c>allow_msg_ttl</c>, the <c>Nats-TTL</c> header,
/// <c>subject_delete_marker_ttl</c> and its markers), which nats-server 2.9.10 lacks, so Courier only, through
/// NATS.Net (publishes with headers, stream reads, the KV store's per-key TTL on create).
/// </summary>
[Trait("server", "courier")]
public sealed class MessageTtlTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    private static readonly TimeSpan Generous = TimeSpan.FromSeconds(20); // an expiry is looked for every 250 ms

    [Fact]
    public Task A_ttl_on_a_stream_without_allow_msg_ttl_and_an_unreadable_ttl_are_refused_with_nats_servers_errors() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (js, p, ct) =>
        {
            var plain = NatsNetClient.NameFor(p) + "_plain";
            await js.CreateStreamAsync(new StreamConfig(plain, [p + ".plain.>"]), ct);
            var refused = await js.PublishAsync($"{p}.plain.a", "x", headers: Ttl("5s"), cancellationToken: ct);
            Assert.Equal((400, 10166, "per-message TTL is disabled"), (refused.Error?.Code, refused.Error?.ErrCode, refused.Error?.Description));
            var never = await js.PublishAsync($"{p}.plain.a", "x", headers: Ttl("never"), cancellationToken: ct);
            Assert.Equal(10166, never.Error?.ErrCode);
            var invalidToo = await js.PublishAsync($"{p}.plain.a", "x", headers: Ttl("soon"), cancellationToken: ct);
            Assert.Equal(10165, invalidToo.Error?.ErrCode); // unreadable is invalid before it is disabled (nats-server)
            Assert.Equal(0L, (await js.GetStreamAsync(plain, cancellationToken: ct)).Info.State.Messages);

            var ttl = NatsNetClient.NameFor(p) + "_ttl";
            var created = await js.CreateStreamAsync(new StreamConfig(ttl, [p + ".ttl.>"]) { AllowMsgTTL = true }, ct);
            Assert.True(created.Info.Config.AllowMsgTTL);
            foreach (var bad in new[] { "soon", "500ms", "0", "-5", "-1s" })
            {
                var invalid = await js.PublishAsync($"{p}.ttl.a", "x", headers: Ttl(bad), cancellationToken: ct);
                Assert.Equal((400, 10165, "invalid per-message TTL"), (invalid.Error?.Code, invalid.Error?.ErrCode, invalid.Error?.Description));
            }

            foreach (var good in new[] { "never", "NEVER", "1h", "90", "1m30s" })
            {
                (await js.PublishAsync($"{p}.ttl.a", good, headers: Ttl(good), cancellationToken: ct)).EnsureSuccess();
            }

            Assert.Equal(5L, (await js.GetStreamAsync(ttl, cancellationToken: ct)).Info.State.Messages);

            // Once on, allow_msg_ttl stays on (nats-server's update check).
            var off = await Assert.ThrowsAsync<NatsJSApiException>(async () => await js.UpdateStreamAsync(new StreamConfig(ttl, [p + ".ttl.>"]), ct));
            Assert.Equal((500, 10052, "message TTL status can not be disabled"), (off.Error.Code, off.Error.ErrCode, off.Error.Description));
        });

    [Fact]
    public Task Messages_expire_at_their_ttl_and_a_ttl_of_never_outlives_max_age() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(new StreamConfig(name, [p + ".>"]) { AllowMsgTTL = true, MaxAge = TimeSpan.FromSeconds(4) }, ct);
            var shortLived = (await js.PublishAsync($"{p}.short", "s", headers: Ttl("1s"), cancellationToken: ct)).Seq;
            var kept = (await js.PublishAsync($"{p}.kept", "k", headers: Ttl("never"), cancellationToken: ct)).Seq;
            var aged = (await js.PublishAsync($"{p}.aged", "a", cancellationToken: ct)).Seq;
            var stream = await js.GetStreamAsync(name, cancellationToken: ct);

            Assert.True(await PollAsync(async () => !await ExistsAsync(stream, shortLived, ct), ct), "the 1s message never expired");
            Assert.True(await PollAsync(async () => !await ExistsAsync(stream, aged, ct), ct), "max_age never removed the plain message");
            Assert.True(await ExistsAsync(stream, kept, ct), "Nats-TTL: never must outlive max_age");
        });

    [Fact]
    public Task A_ttl_still_expires_its_message_after_a_restart() =>
        NatsNetClient.AcrossRestartAsync(
            fixture,
            async (nats, js, p, ct) =>
            {
                await js.CreateStreamAsync(new StreamConfig(NatsNetClient.NameFor(p), [p + ".>"]) { AllowMsgTTL = true }, ct);
                (await js.PublishAsync($"{p}.soon", "s", headers: Ttl("3s"), cancellationToken: ct)).EnsureSuccess();
                (await js.PublishAsync($"{p}.later", "l", headers: Ttl("1h"), cancellationToken: ct)).EnsureSuccess();
            },
            async (nats, js, p, ct) =>
            {
                var stream = await js.GetStreamAsync(NatsNetClient.NameFor(p), cancellationToken: ct);
                Assert.True(await PollAsync(async () => !await ExistsAsync(stream, 1, ct), ct), "the message never expired after the restart");
                Assert.True(await ExistsAsync(stream, 2, ct));
            });

    [Fact]
    public Task Subject_delete_markers_take_the_place_of_a_subjects_last_expired_message_and_expire_in_turn() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (js, p, ct) =>
        {
            var name = NatsNetClient.NameFor(p);
            // nats-server (not pedantic): markers bring message TTLs and roll-ups with them.
            var created = await js.CreateStreamAsync(new StreamConfig(name, [p + ".>"]) { SubjectDeleteMarkerTTL = TimeSpan.FromSeconds(2) }, ct);
            Assert.True(created.Info.Config.AllowMsgTTL);
            Assert.True(created.Info.Config.AllowRollupHdrs);

            (await js.PublishAsync($"{p}.one", "first", headers: Ttl("1s"), cancellationToken: ct)).EnsureSuccess();     // raised to the markers' 2s
            (await js.PublishAsync($"{p}.two", "a", headers: Ttl("2s"), cancellationToken: ct)).EnsureSuccess();
            (await js.PublishAsync($"{p}.two", "b", headers: Ttl("1h"), cancellationToken: ct)).EnsureSuccess();
            var stream = await js.GetStreamAsync(name, cancellationToken: ct);
            var first = await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 }, ct);
            Assert.Contains("Nats-TTL: 2", Text(first.Message.Hdrs), StringComparison.Ordinal);

            // p.one's only message expires: a marker in its place (sequence 4); p.two keeps "b", so no marker for it.
            Assert.True(await PollAsync(async () => (await js.GetStreamAsync(name, cancellationToken: ct)).Info.State.LastSeq >= 4, ct), "no delete marker");
            var marker = await stream.GetAsync(new StreamMsgGetRequest { LastBySubj = $"{p}.one" }, ct);
            Assert.Equal(4UL, marker.Message.Seq);
            Assert.Contains("Nats-Marker-Reason: MaxAge", Text(marker.Message.Hdrs), StringComparison.Ordinal);
            Assert.Contains("Nats-TTL: 2s", Text(marker.Message.Hdrs), StringComparison.Ordinal);
            Assert.Contains("Nats-Rollup: sub", Text(marker.Message.Hdrs), StringComparison.Ordinal);
            Assert.True(await PollAsync(async () => !await ExistsAsync(stream, 2, ct), ct));
            Assert.True(await ExistsAsync(stream, 3, ct));

            // The marker expires by its own TTL and leaves nothing behind (no marker for a marker).
            Assert.True(await PollAsync(async () => !await ExistsAsync(stream, 4, ct), ct), "the marker never expired");
            var state = (await js.GetStreamAsync(name, cancellationToken: ct)).Info.State;
            Assert.Equal((1L, 4UL), (state.Messages, state.LastSeq));
        });

    [Fact]
    public Task A_key_created_with_a_ttl_through_NATS_Net_expires_and_can_be_created_again_and_a_purge_marker_with_a_ttl_expires() =>
        NatsNetClient.WithJetStreamAsync(fixture, async (nats, js, p, ct) =>
        {
            // The bucket's stream as NATS.Net's CreateStoreAsync makes it with LimitMarkerTTL (NATS.Net asks $JS.API.INFO
            // for API level 1 first, which Courier does not claim yet, so the stream is made here).
            var bucket = NatsNetClient.NameFor(p);
            await js.CreateStreamAsync(
                new StreamConfig($"KV_{bucket}", [$"$KV.{bucket}.>"])
                {
                    MaxMsgsPerSubject = 1,
                    AllowRollupHdrs = true,
                    DenyDelete = true,
                    AllowDirect = true,
                    Discard = StreamConfigDiscard.New,
                    DuplicateWindow = TimeSpan.FromMinutes(2),
                    SubjectDeleteMarkerTTL = TimeSpan.FromSeconds(1),
                },
                ct);
            var kv = await new NatsKVContext(js).GetStoreAsync(bucket, ct);

            var revision = await kv.CreateAsync("key", "short", TimeSpan.FromSeconds(1), cancellationToken: ct);
            Assert.Equal("short", (await kv.GetEntryAsync<string>("key", cancellationToken: ct)).Value);
            var taken = await Assert.ThrowsAsync<NatsKVCreateException>(async () => await kv.CreateAsync("key", "again", cancellationToken: ct));
            Assert.NotNull(taken);

            // Expired: gone for Get (the marker says so), and a create succeeds again.
            Assert.True(await PollAsync(async () =>
            {
                try
                {
                    await kv.GetEntryAsync<string>("key", cancellationToken: ct);
                    return false;
                }
                catch (Exception e) when (e is NatsKVKeyDeletedException or NatsKVKeyNotFoundException)
                {
                    return true;
                }
            }, ct), "the key never expired");
            var again = await kv.CreateAsync("key", "again", cancellationToken: ct);
            Assert.True(again > revision);
            Assert.Equal("again", (await kv.GetEntryAsync<string>("key", cancellationToken: ct)).Value);

            // A purge marker with a TTL (NATS.Net PurgeAsync(key, ttl)) goes in its turn, and leaves no marker of its own.
            await kv.PurgeAsync("key", TimeSpan.FromSeconds(1), cancellationToken: ct);
            await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await kv.GetEntryAsync<string>("key", cancellationToken: ct));
            Assert.True(await PollAsync(async () => (await js.GetStreamAsync($"KV_{bucket}", cancellationToken: ct)).Info.State.Messages == 0, ct), "the purge marker never expired");
        });

    /// <summary>STREAM.MSG.GET's header block (base64) as text.</summary>
    private static string Text(string? hdrs) => System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(hdrs ?? ""));

    private static NatsHeaders Ttl(string value) => new() { ["Nats-TTL"] = value };

    private static async Task<bool> ExistsAsync(INatsJSStream stream, ulong seq, CancellationToken ct)
    {
        try
        {
            await stream.GetAsync(new StreamMsgGetRequest { Seq = seq }, ct);
            return true;
        }
        catch (NatsJSApiException e) when (e.Error.ErrCode == 10037)
        {
            return false;
        }
    }

    private static async Task<bool> PollAsync(Func<Task<bool>> condition, CancellationToken ct)
    {
        var deadline = DateTime.UtcNow + Generous;
        while (DateTime.UtcNow < deadline)
        {
            if (await condition())
            {
                return true;
            }

            await Task.Delay(100, ct);
        }

        return false;
    }
}
