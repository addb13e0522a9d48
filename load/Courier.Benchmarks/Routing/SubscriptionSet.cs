using System.Text;
using Courier.Actors.Connections;
using Courier.Actors.Routing;
using Courier.Benchmarks.Infrastructure;

namespace Courier.Benchmarks.Routing;

/// <summary>
/// Builds the routing state the benchmarks match against without the router actors: real
/// <see cref="Subscription"/>s of one socketless client, put in the shard a router would put them
/// in, then published as each shard's snapshot.
/// </summary>
internal sealed class SubscriptionSet : IAsyncDisposable
{
    private readonly EmbeddedBroker _broker = new();
    private readonly ClientConnection _client;
    private readonly SubList[] _shards;
    private SubList _all = SubList.Empty;
    private int _nextSid;

    public SubscriptionSet(int literalShards = 4)
    {
        _client = _broker.Connect();
        Space = new SubjectSpace(literalShards);
        _shards = new SubList[Space.ShardCount];
        Array.Fill(_shards, SubList.Empty);
    }

    /// <summary>The sharded space; call <see cref="Publish"/> after the last <see cref="Add"/>.</summary>
    public SubjectSpace Space { get; }

    /// <summary>Every subscription in one trie, as a single shard would hold them.</summary>
    public SubList All => _all;

    public void Add(string subject, string? queue = null)
    {
        var subjectBytes = Encoding.ASCII.GetBytes(subject);
        var sid = Encoding.ASCII.GetBytes((++_nextSid).ToString(System.Globalization.CultureInfo.InvariantCulture));
        var shard = Space.ShardForSubscription(subjectBytes);
        var sub = new Subscription(_client, _client.Account, subject, queue, sid, shard);
        _shards[shard] = _shards[shard].Insert(sub);
        _all = _all.Insert(sub);
    }

    public void Publish()
    {
        for (var i = 0; i < _shards.Length; i++)
        {
            Space.Publish(i, _shards[i]);
        }
    }

    /// <summary>
    /// Ten thousand literal subjects over 100 first tokens (<c>svc{i % 100}.item{i}.created</c>) and a
    /// few wildcards, four of them matching <c>svc0.item5000.created</c>.
    /// </summary>
    public void AddTenThousand()
    {
        for (var i = 0; i < 10_000; i++)
        {
            Add($"svc{i % 100}.item{i}.created");
        }

        Add("svc0.*.created");
        Add("svc0.>");
        Add("*.item5000.created");
        Add("*.*.created", queue: "audit");
        Add("svc1.*.deleted");
        Add("*.*.deleted");
        Add("svc2.>");
    }

    public ValueTask DisposeAsync() => _broker.DisposeAsync();
}
