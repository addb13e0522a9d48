using System.Security.Cryptography;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.KeyValueStore;
using NATS.Client.ObjectStore;

namespace Courier.Integration.Tests.Clients;

/// <summary>
/// Key-value buckets and object stores through the official .NET client (NATS.Client.KeyValueStore
/// and NATS.Client.ObjectStore from NATS.Net), each test on a fresh <c>-js</c> server.
/// </summary>
public abstract class NatsNetKeyValueObjectTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    private const int ObjectChunkSize = 128 * 1024; // bytes: NATS.Net's default object chunk

    private readonly TServer _server;

    protected NatsNetKeyValueObjectTests(TServer server)
    {
        _server = server;
    }

    [Fact]
    public Task Put_returns_the_revision_get_reads_the_latest_or_a_given_one_and_delete_hides_the_key() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)) { History = 5 }, ct);

            var first = await kv.PutAsync("colour", "red", cancellationToken: ct);
            var second = await kv.PutAsync("colour", "green", cancellationToken: ct);
            Assert.Equal(first + 1, second);

            var latest = await kv.GetEntryAsync<string>("colour", cancellationToken: ct);
            Assert.Equal("green", latest.Value);
            Assert.Equal(second, latest.Revision);
            Assert.Equal(NatsKVOperation.Put, latest.Operation);
            Assert.Equal("red", (await kv.GetEntryAsync<string>("colour", revision: first, cancellationToken: ct)).Value);

            await kv.DeleteAsync("colour", cancellationToken: ct);
            await Assert.ThrowsAsync<NatsKVKeyDeletedException>(async () => await kv.GetEntryAsync<string>("colour", cancellationToken: ct));
            await Assert.ThrowsAsync<NatsKVKeyNotFoundException>(async () => await kv.GetEntryAsync<string>("never", cancellationToken: ct));
        });

    [Fact]
    public Task History_lists_every_kept_revision_of_one_key_oldest_first() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)) { History = 3 }, ct);
            for (var i = 1; i <= 4; i++)
            {
                await kv.PutAsync("counter", $"v{i}", cancellationToken: ct);
                await kv.PutAsync("other", $"o{i}", cancellationToken: ct);
            }

            var history = new List<NatsKVEntry<string>>();
            await foreach (var entry in kv.HistoryAsync<string>("counter", cancellationToken: ct))
            {
                history.Add(entry);
            }

            // History 3 keeps the last three of the four puts; revisions count every put in the bucket.
            Assert.Equal(["v2", "v3", "v4"], history.Select(e => e.Value));
            Assert.Equal([3UL, 5UL, 7UL], history.Select(e => e.Revision));
            Assert.All(history, e => Assert.Equal("counter", e.Key));
        });

    [Fact]
    public Task A_watch_sees_the_current_value_then_later_puts_and_deletes_in_order() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)), ct);
            await kv.PutAsync("light", "off", cancellationToken: ct);
            await kv.PutAsync("light", "on", cancellationToken: ct);

            var seen = new List<(string Key, string? Value, NatsKVOperation Op)>();
            await foreach (var entry in kv.WatchAsync<string>("light", cancellationToken: ct))
            {
                seen.Add((entry.Key, entry.Value, entry.Operation));
                if (seen.Count == 1)
                {
                    // The watch has delivered the current value: now change it twice.
                    await kv.PutAsync("light", "dimmed", cancellationToken: ct);
                    await kv.DeleteAsync("light", cancellationToken: ct);
                }
                else if (seen.Count == 3)
                {
                    break;
                }
            }

            Assert.Equal(("light", "on", NatsKVOperation.Put), seen[0]);
            Assert.Equal(("light", "dimmed", NatsKVOperation.Put), seen[1]);
            Assert.Equal(("light", NatsKVOperation.Del), (seen[2].Key, seen[2].Op));
        });

    [Fact]
    public Task GetKeysAsync_lists_the_one_key_of_a_bucket() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)), ct);
            await kv.PutAsync("only", "value", cancellationToken: ct);

            Assert.Equal(["only"], await KeysAsync(kv, ct));
        });

    [Fact]
    public Task GetKeysAsync_lists_each_live_key_once_however_often_it_was_written_and_not_deleted_ones() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)) { History = 5 }, ct);
            await kv.PutAsync("a", "1", cancellationToken: ct);
            await kv.PutAsync("b.c", "1", cancellationToken: ct);
            await kv.PutAsync("a", "2", cancellationToken: ct);
            await kv.PutAsync("gone", "1", cancellationToken: ct);
            await kv.PutAsync("d", "1", cancellationToken: ct);
            await kv.DeleteAsync("gone", cancellationToken: ct);
            await kv.PutAsync("a", "3", cancellationToken: ct);

            var keys = await KeysAsync(kv, ct);
            keys.Sort(StringComparer.Ordinal);
            Assert.Equal(["a", "b.c", "d"], keys);
        });

    [Fact]
    public Task GetKeysAsync_on_an_empty_bucket_ends_with_no_keys() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(NatsNetClient.NameFor(p)), ct);

            Assert.Empty(await KeysAsync(kv, ct));
        });

    [Fact]
    public Task A_multi_chunk_object_round_trips_and_is_described_listed_and_deleted() =>
        WithJetStreamAsync(async (js, p, ct) =>
        {
            var store = await new NatsObjContext(js).CreateObjectStoreAsync(new NatsObjConfig(NatsNetClient.NameFor(p)), ct);
            var data = RandomNumberGenerator.GetBytes((3 * ObjectChunkSize) + 1000); // four chunks, the last one short
            var small = RandomNumberGenerator.GetBytes(10);

            var put = await store.PutAsync("blob.bin", data, ct);
            Assert.Equal("blob.bin", put.Name);
            Assert.Equal(data.Length, (int)put.Size);
            Assert.Equal(4U, put.Chunks);
            await store.PutAsync("small.txt", small, ct);

            Assert.Equal(data, await store.GetBytesAsync("blob.bin", ct));
            Assert.Equal(small, await store.GetBytesAsync("small.txt", ct));

            var info = await store.GetInfoAsync("blob.bin", cancellationToken: ct);
            Assert.Equal(data.Length, (int)info.Size);
            Assert.Equal(4U, info.Chunks);
            Assert.Equal(put.Digest, info.Digest);
            Assert.False(info.Deleted);

            Assert.Equal(["blob.bin", "small.txt"], await ObjectNamesAsync(store, ct));

            await store.DeleteAsync("blob.bin", ct);
            await Assert.ThrowsAsync<NatsObjNotFoundException>(async () => await store.GetInfoAsync("blob.bin", cancellationToken: ct));
            Assert.True((await store.GetInfoAsync("blob.bin", showDeleted: true, ct)).Deleted);
            Assert.Equal(["small.txt"], await ObjectNamesAsync(store, ct));
            Assert.Equal(small, await store.GetBytesAsync("small.txt", ct));
        });

    private static async Task<List<string>> KeysAsync(INatsKVStore kv, CancellationToken ct)
    {
        var keys = new List<string>();
        await foreach (var key in kv.GetKeysAsync(cancellationToken: ct))
        {
            keys.Add(key);
        }

        return keys;
    }

    private static async Task<List<string>> ObjectNamesAsync(INatsObjStore store, CancellationToken ct)
    {
        var names = new List<string>();
        await foreach (var meta in store.ListAsync(cancellationToken: ct))
        {
            names.Add(meta.Name);
        }

        names.Sort(StringComparer.Ordinal);
        return names;
    }

    private Task WithJetStreamAsync(Func<NatsJSContext, string, CancellationToken, Task> test) => NatsNetClient.WithJetStreamAsync(_server, test);
}

[Trait("server", "nats-server")]
public sealed class NatsNetKeyValueObjectTests_NatsServer(NatsServerFixture server) : NatsNetKeyValueObjectTests<NatsServerFixture>(server);

[Trait("server", "courier")]
public sealed class NatsNetKeyValueObjectTests_Courier(CourierFixture server) : NatsNetKeyValueObjectTests<CourierFixture>(server);
