using Akka.Actor;
using Courier.Storage;
using Prometheus;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// <c>courier_*</c>: Courier's own figures, which no exporter knows. The storage histograms come from the
/// <see cref="StoreMetrics"/> meter through prometheus-net's meter adapter (<c>courier_store_fsync_seconds</c>,
/// <c>courier_store_group_commit_entries{log}</c>); the mailbox depths and the Raft groups are read at scrape
/// time, like the exporter's families.
/// </summary>
internal sealed partial class PrometheusMetrics : IDisposable
{
    // fsync: 50 us to about 1.6 s; group commits: 1 to 16384 entries.
    private static readonly double[] FsyncBuckets = Histogram.ExponentialBuckets(0.00005, 2, 16);
    private static readonly double[] GroupCommitBuckets = Histogram.ExponentialBuckets(1, 2, 15);

    private static readonly string[] MailboxLabels = ["server_id", "actor"];
    private static readonly string[] RaftLabels = ["server_id", "raft_group", "account", "stream"];
    private static readonly string[] RaftPeerLabels = [.. RaftLabels, "peer"];

    private IDisposable? _meterAdapter;

    /// <summary>Stops listening to the storage meter.</summary>
    public void Dispose() => _meterAdapter?.Dispose();

    private void ListenToStoreMeter() =>
        _meterAdapter = MeterAdapter.StartListening(new MeterAdapterOptions
        {
            Registry = Registry,
            MetricFactory = _factory,
            InstrumentFilterPredicate = instrument => instrument.Meter.Name == StoreMetrics.MeterName,
            ResolveHistogramBuckets = instrument => instrument == StoreMetrics.FsyncSeconds ? FsyncBuckets : GroupCommitBuckets,
            MetricsExpireAfter = TimeSpan.FromDays(1), // the adapter's longest: a store idle for a day starts its histogram again (a counter reset to Prometheus)
        });

    /// <summary>
    /// <c>courier_mailbox_messages</c>, <c>courier_mailbox_messages_max</c> and <c>courier_actors</c> by actor
    /// class: the messages waiting in the mailboxes of this server's actors (the sum and the deepest one), and
    /// how many actors there are, from one walk of the actor tree.
    /// </summary>
    private void UpdateMailboxes(string serverId)
    {
        if (_broker.System is not ExtendedActorSystem system)
        {
            return;
        }

        var byClass = new Dictionary<string, (int Actors, long Messages, long Max)>(StringComparer.Ordinal);
        var pending = new Stack<IActorRef>();
        pending.Push(system.Guardian);
        pending.Push(system.SystemGuardian);
        while (pending.Count > 0)
        {
            if (pending.Pop() is not ActorRefWithCell { Underlying: var cell } actor)
            {
                continue;
            }

            var name = cell.Props?.Type?.Name ?? actor.GetType().Name;
            var messages = (long)cell.NumberOfMessages;
            byClass[name] = byClass.TryGetValue(name, out var sum)
                ? (sum.Actors + 1, sum.Messages + messages, Math.Max(sum.Max, messages))
                : (1, messages, messages);
            foreach (var child in actor.Children)
            {
                pending.Push(child);
            }
        }

        var total = Gauge("courier_mailbox_messages", "Messages waiting in the mailboxes of the actors of a class", MailboxLabels);
        var deepest = Gauge("courier_mailbox_messages_max", "Messages waiting in the deepest mailbox of an actor of a class", MailboxLabels);
        var actors = Gauge("courier_actors", "Actors of a class", MailboxLabels);
        foreach (var (name, (count, messages, max)) in byClass)
        {
            total.Set(messages, serverId, name);
            deepest.Set(max, serverId, name);
            actors.Set(count, serverId, name);
        }
    }

    /// <summary>
    /// <c>courier_raft_*</c>: each Raft group hosted here (its term, whether this member leads, its commit and
    /// applied indexes, the entries its log holds) and, on a leader, how far each other member is behind.
    /// </summary>
    private async Task UpdateRaftAsync(string serverId)
    {
        var raftz = await _pages.RaftzAsync("", "").ConfigureAwait(false);
        foreach (var group in raftz.Groups)
        {
            string[] labels = [serverId, group.Group, group.Account, group.Stream];
            Gauge("courier_raft_term", "The group's current term", RaftLabels).Set(group.Term, labels);
            Gauge("courier_raft_is_leader", "1 when this member leads the group", RaftLabels).Set(group.Role == "leader" ? 1 : 0, labels);
            Gauge("courier_raft_commit_index", "The highest log index known committed", RaftLabels).Set(group.Commit, labels);
            Gauge("courier_raft_applied_index", "The highest log index applied here", RaftLabels).Set(group.Applied, labels);
            Gauge("courier_raft_log_entries", "Entries this member's log holds (after its last compaction)", RaftLabels)
                .Set(group.LastIndex >= group.FirstIndex && group.LastIndex > 0 ? group.LastIndex - group.FirstIndex + 1 : 0, labels);
            if (group.Role != "leader")
            {
                continue;
            }

            foreach (var peer in group.Peers.Where(p => p.Id != group.Id))
            {
                Gauge("courier_raft_peer_lag_entries", "On the leader: entries of its log a member does not hold yet", RaftPeerLabels)
                    .Set(group.LastIndex > peer.Match ? group.LastIndex - peer.Match : 0, [.. labels, peer.Name ?? peer.Id]);
            }
        }
    }
}
