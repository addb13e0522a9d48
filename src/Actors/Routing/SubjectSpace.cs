using System.Buffers;
using System.Collections.Concurrent;
using System.Text;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Routing;

/// <summary>
/// The node's subject space as publishers see it: the current snapshot of every router shard,
/// read without locks, each with its own bounded match cache.
/// </summary>
/// <remarks>
/// Shard key: a subscription's first token, hashed; subscriptions whose first token is a wildcard
/// live in one extra shard that every publish also consults. A cached match records the wildcard
/// shard's version it was computed with, so a change in a literal shard drops only that shard's
/// cache (a new snapshot starts empty) and a change in the wildcard shard makes entries stale lazily.
/// Hot path (<see cref="Match"/> on a hit): two volatile reads, one span-keyed dictionary lookup, no
/// allocation.
/// </remarks>
internal sealed class SubjectSpace
{
    /// <summary>Entries per shard cache before it is pruned (nats-server keeps 1024 per sublist).</summary>
    internal const int MaxCachedSubjects = 4096;

    private readonly ShardSnapshot[] _shards;
    private readonly int _literalShards;
    private long _version;

    [ThreadStatic]
    private static List<Subscription>? _threadPlain;

    [ThreadStatic]
    private static List<Subscription>? _threadQueued;

    [ThreadStatic]
    private static MatchResult? _threadLastResult;

    public SubjectSpace(int literalShards)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(literalShards, 1);
        _literalShards = literalShards;
        _shards = new ShardSnapshot[literalShards + 1];
        for (var i = 0; i < _shards.Length; i++)
        {
            _shards[i] = new ShardSnapshot(SubList.Empty, 0);
        }
    }

    /// <summary>
    /// Changes whenever any shard publishes a snapshot. A match computed after reading version v is
    /// still current while the version is v (a publisher's one-entry cache relies on this).
    /// </summary>
    public long Version => Volatile.Read(ref _version);

    /// <summary>Literal shards plus the wildcard shard.</summary>
    public int ShardCount => _shards.Length;

    /// <summary>The index of the shard for subscriptions whose first token is a wildcard.</summary>
    public int WildcardShard => _literalShards;

    /// <summary>Subscriptions held by all shards.</summary>
    public int Count
    {
        get
        {
            var n = 0;
            for (var i = 0; i < _shards.Length; i++)
            {
                n += Volatile.Read(ref _shards[i]).List.Count;
            }

            return n;
        }
    }

    /// <summary>The shard that holds a subscription to <paramref name="subject"/>.</summary>
    public int ShardForSubscription(ReadOnlySpan<byte> subject)
    {
        var first = FirstToken(subject);
        return first.Length == 1 && (first[0] == (byte)'*' || first[0] == (byte)'>') ? _literalShards : HashShard(first);
    }

    /// <summary>The current snapshot of one shard.</summary>
    public SubList Snapshot(int shard) => Volatile.Read(ref _shards[shard]).List;

    /// <summary>Publishes a shard's new trie. Only that shard's router calls this.</summary>
    public void Publish(int shard, SubList list)
    {
        var old = Volatile.Read(ref _shards[shard]);
        Volatile.Write(ref _shards[shard], new ShardSnapshot(list, old.Version + 1));
        Interlocked.Increment(ref _version);
    }

    /// <summary>Every subscription a message published to the literal <paramref name="subject"/> reaches.</summary>
    public MatchResult Match(ReadOnlySpan<byte> subject)
    {
        var shard = Volatile.Read(ref _shards[HashShard(FirstToken(subject))]);
        var wild = Volatile.Read(ref _shards[_literalShards]);
        if (shard.Lookup.TryGetValue(subject, out var cached) && cached.WildcardVersion == wild.Version)
        {
            return cached.Result;
        }

        return MatchAndCache(subject, shard, wild);
    }

    private static MatchResult MatchAndCache(ReadOnlySpan<byte> subjectBytes, ShardSnapshot shard, ShardSnapshot wild)
    {
        var plain = _threadPlain ??= [];
        var queued = _threadQueued ??= [];
        plain.Clear();
        queued.Clear();
        char[]? rented = null;
        var chars = subjectBytes.Length <= 256 ? stackalloc char[256] : (rented = ArrayPool<char>.Shared.Rent(subjectBytes.Length));
        var subject = chars[..Encoding.UTF8.GetChars(subjectBytes, chars)];
        shard.List.Match(subject, plain, queued);
        wild.List.Match(subject, plain, queued);
        if (rented is not null)
        {
            ArrayPool<char>.Shared.Return(rented);
        }

        // One-off subjects mostly reach the same subscriptions as the one before (every ack reaches its
        // stream's ack subscription): reuse that result rather than building an equal one.
        var last = _threadLastResult;
        var result = last is not null && last.Holds(plain, queued) ? last : MatchResult.Create(plain, queued);
        _threadLastResult = result;
        plain.Clear();
        queued.Clear();

        // Admission: a subject is cached the second time it misses. One-off subjects (JetStream ack
        // replies, inboxes) then never churn the cache; a repeated subject costs one extra miss.
        var hash = SubjectBytesComparer.Instance.GetHashCode(subjectBytes);
        ref var seen = ref shard.Doorkeeper[(uint)hash % (uint)shard.Doorkeeper.Length];
        if (Volatile.Read(ref seen) != hash)
        {
            Volatile.Write(ref seen, hash);
            return result;
        }

        // ConcurrentDictionary.Count takes every lock of the dictionary: keep an approximate count.
        if (Volatile.Read(ref shard.ApproximateCount) >= MaxCachedSubjects)
        {
            Prune(shard);
        }

        if (shard.Lookup.TryAdd(subjectBytes, new CachedMatch(result, wild.Version)))
        {
            Interlocked.Increment(ref shard.ApproximateCount);
        }
        else
        {
            shard.Lookup[subjectBytes] = new CachedMatch(result, wild.Version);
        }

        return result;
    }

    private static void Prune(ShardSnapshot shard)
    {
        // Drop a quarter, in whatever order the dictionary yields: cheap, and hot subjects come back.
        // Enumerating a ConcurrentDictionary takes no locks (unlike Count or Keys).
        var toDrop = MaxCachedSubjects / 4;
        foreach (var entry in shard.Cache)
        {
            if (toDrop-- <= 0)
            {
                break;
            }

            if (shard.Cache.TryRemove(entry.Key, out _))
            {
                Interlocked.Decrement(ref shard.ApproximateCount);
            }
        }
    }

    private int HashShard(ReadOnlySpan<byte> firstToken)
    {
        if (_literalShards == 1)
        {
            return 0;
        }

        var h = default(HashCode);
        h.AddBytes(firstToken);
        return (int)((uint)h.ToHashCode() % (uint)_literalShards);
    }

    private static ReadOnlySpan<byte> FirstToken(ReadOnlySpan<byte> subject)
    {
        var dot = subject.IndexOf((byte)'.');
        return dot < 0 ? subject : subject[..dot];
    }

    private sealed class ShardSnapshot
    {
        public ShardSnapshot(SubList list, long version)
        {
            List = list;
            Version = version;
            Cache = new ConcurrentDictionary<byte[], CachedMatch>(SubjectBytesComparer.Instance);
            Lookup = Cache.GetAlternateLookup<ReadOnlySpan<byte>>();
        }

        public SubList List { get; }

        public long Version { get; }

        public ConcurrentDictionary<byte[], CachedMatch> Cache { get; }

        // Hashes of subjects that missed once (see MatchAndCache); racy by design, only a hint.
        public int[] Doorkeeper { get; } = new int[MaxCachedSubjects];

        // Entries in Cache, kept by hand (see MatchAndCache).
#pragma warning disable SA1401, CA1051
        public int ApproximateCount;
#pragma warning restore SA1401, CA1051

        // A field, not a property: the lookup is a struct and indexer writes must reach this copy.
#pragma warning disable SA1401, CA1051
        public readonly ConcurrentDictionary<byte[], CachedMatch>.AlternateLookup<ReadOnlySpan<byte>> Lookup;
#pragma warning restore SA1401, CA1051
    }

    private sealed record CachedMatch(MatchResult Result, long WildcardVersion);
}
