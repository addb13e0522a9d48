using System.Security.Cryptography;
using System.Text;
using Courier.Actors.Accounts;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Leaf;

/// <summary>
/// The node's leaf node links and the interest each has been told (nats-server's per-link
/// <c>leaf.smap</c>): every subscription of every account, by subject (and queue), with the
/// connections that hold it, so a link that registers is told all of its account's interest at once
/// (LS+) and each later change once (LS+ / LS-), in the order it happened. One lock guards it all.
/// </summary>
/// <remarks>
/// What a link is told, as nats-server's initLeafNodeSmapAndSendSubs / updateLeafNodes / updateSmap:
/// on a hub's link (accepted), all interest of the bound account but the link's own; on a leaf's
/// link (dialled), only its local clients' and services' interest and that of the leafs it is hub
/// for; never interest that came from the link's own cluster; never JetStream's API subjects
/// (nats-server's denyAllClientJs); never what the remote's <c>deny_imports</c> names. Each link
/// also gets its account's loop detection subject <c>$LDS.&lt;random&gt;</c>: a link that receives its
/// own back closes with "Loop detected". Not on the message path: called where SUB/UNSUB batches
/// are applied (before the routers are asked, as routes are told) and by links during their
/// handshake. Writes only into link outbounds, never does I/O.
/// </remarks>
internal sealed class LeafTable
{
    /// <summary>nats-server's leafNodeLoopDetectionSubjectPrefix.</summary>
    public const string LoopDetectionPrefix = "$LDS.";

    // nats-server's denyAllClientJs: JetStream's API is never extended over a leaf link without domains.
    private static readonly string[] DeniedPrefixes = ["$JS.API.", "$KV.", "$OBJ."];

    private readonly Lock _lock = new();
    private readonly List<LeafConnection> _links = [];
    private readonly Dictionary<Account, Dictionary<string, Interest>> _interest = [];
    private readonly Dictionary<Account, string> _loopSubjects = [];
    private byte[] _scratch = new byte[1024];
    private LeafConnection[] _snapshot = [];

    /// <summary>The registered links now (for monitoring).</summary>
    public LeafConnection[] Links => Volatile.Read(ref _snapshot);

    /// <summary>The loop detection subject of <paramref name="account"/> on this node (made at its first use).</summary>
    public string LoopSubject(Account account)
    {
        lock (_lock)
        {
            return LoopSubjectLocked(account);
        }
    }

    /// <summary>
    /// Registers a link whose account is bound and queues LS+ for all the interest it is to be told,
    /// its account's loop detection subject included.
    /// </summary>
    public void Register(LeafConnection link)
    {
        lock (_lock)
        {
            var smap = link.Smap;
            smap.Clear();
            if (_interest.TryGetValue(link.Account, out var keys))
            {
                foreach (var (key, interest) in keys)
                {
                    var n = CountFor(link, interest);
                    if (n > 0)
                    {
                        smap[key] = n;
                        Write(link, interest.Subject, interest.Queue, n);
                    }
                }
            }

            var lds = LoopSubjectLocked(link.Account);
            smap[lds] = 1;
            Write(link, Encoding.UTF8.GetBytes(lds), [], 1);
            link.Link.Registered = true;
            _links.Add(link);
            Volatile.Write(ref _snapshot, [.. _links]);
        }

        link.Outbound.Signal();
    }

    /// <summary>Removes a closing link (its own subscriptions go as any connection's do).</summary>
    public void Unregister(LeafConnection link)
    {
        lock (_lock)
        {
            if (!link.Link.Registered)
            {
                return;
            }

            link.Link.Registered = false;
            _links.Remove(link);
            Volatile.Write(ref _snapshot, [.. _links]);
        }
    }

    /// <summary>
    /// Updates the interest told to the links for a batch of subscription changes of any connection
    /// (clients, services, routes, leaf links): LS+ when a link's count of a subject goes from 0, or a
    /// queue group's changes; LS- when it drops to 0.
    /// </summary>
    public void OnChanges(IReadOnlyList<SubChange> changes)
    {
        lock (_lock)
        {
            var touched = false;
            foreach (var change in changes)
            {
                var sub = change.Sub;
                if (change.Add ? !sub.MarkCountedForLeafs() : !sub.UnmarkCountedForLeafs())
                {
                    continue; // counted once, uncounted once
                }

                if (!_interest.TryGetValue(sub.Account, out var keys))
                {
                    if (!change.Add)
                    {
                        continue;
                    }

                    _interest[sub.Account] = keys = new Dictionary<string, Interest>(StringComparer.Ordinal);
                }

                var key = sub.Queue is null ? sub.Subject : $"{sub.Subject} {sub.Queue}";
                if (!keys.TryGetValue(key, out var interest))
                {
                    if (!change.Add)
                    {
                        continue;
                    }

                    interest = new Interest(sub.Subject, sub.Queue);
                    keys[key] = interest;
                }

                if (!interest.BySource.TryGetValue(sub.Client, out var held))
                {
                    held = new Holding(sub.Origin);
                    interest.BySource[sub.Client] = held;
                }

                held.Count += change.Add ? 1 : -1;
                if (held.Count <= 0)
                {
                    interest.BySource.Remove(sub.Client);
                }

                foreach (var link in _links)
                {
                    if (!ReferenceEquals(link.Account, sub.Account))
                    {
                        continue;
                    }

                    var before = link.Smap.GetValueOrDefault(key);
                    var after = CountFor(link, interest);
                    if (before == after)
                    {
                        continue;
                    }

                    if (after > 0)
                    {
                        link.Smap[key] = after;
                    }
                    else
                    {
                        link.Smap.Remove(key);
                    }

                    // A queue group's new size always; a plain subject when it appears or goes.
                    if (interest.Queue.Length > 0 || before == 0 || after == 0)
                    {
                        Write(link, interest.Subject, interest.Queue, after);
                        touched = true;
                    }
                }

                if (interest.BySource.Count == 0)
                {
                    keys.Remove(key);
                }
            }

            if (touched)
            {
                foreach (var link in _links)
                {
                    link.Outbound.Signal();
                }
            }
        }
    }

    // How many of the interest's subscriptions the link is to be told of (caller holds _lock).
    private static int CountFor(LeafConnection link, Interest interest)
    {
        var subject = interest.SubjectText;
        var lds = subject.StartsWith(LoopDetectionPrefix, StringComparison.Ordinal);
        if (!lds && (IsDenied(subject) || (link.Link.Solicited && link.Link.InterestDenied(subject))))
        {
            return 0;
        }

        var n = 0;
        foreach (var (source, held) in interest.BySource)
        {
            if (ReferenceEquals(source, link))
            {
                continue; // a link's own interest is never told back to it
            }

            if (source is GatewayConnection)
            {
                continue; // another cluster's interest stays with its gateway link
            }

            if (source is LeafConnection from)
            {
                // Never back into the cluster it came from (but a loop detection subject always goes on).
                if (!lds && from.Link.RemoteCluster is { Length: > 0 } cluster && cluster == link.Link.RemoteCluster)
                {
                    continue;
                }

                // A leaf tells its hub of the leafs it is hub for, not of its other hubs.
                if (link.Link.Solicited && from.Link.Solicited)
                {
                    continue;
                }
            }
            else if (source is RouteConnection)
            {
                if (link.Link.Solicited)
                {
                    continue; // a leaf tells its hub of its own clients only (the cluster's other nodes have their own links)
                }

                if (!lds && held.Origin is { } origin && origin == link.Link.RemoteCluster)
                {
                    continue; // a peer's interest from a leaf of this link's cluster (nats-server's LS+ origin)
                }
            }

            n += held.Count;
        }

        return n;
    }

    private static bool IsDenied(string subject)
    {
        foreach (var prefix in DeniedPrefixes)
        {
            if (subject.StartsWith(prefix, StringComparison.Ordinal))
            {
                return true;
            }
        }

        return false;
    }

    private string LoopSubjectLocked(Account account)
    {
        if (!_loopSubjects.TryGetValue(account, out var lds))
        {
            lds = LoopDetectionPrefix + RandomNumberGenerator.GetHexString(22, lowercase: false);
            _loopSubjects[account] = lds;
        }

        return lds;
    }

    // LS+ <subject>[ <queue> <weight>]\r\n  or  LS- <subject>[ <queue>]\r\n   (caller holds _lock)
    private void Write(LeafConnection link, byte[] subject, byte[] queue, int count)
    {
        var needed = subject.Length + queue.Length + 32;
        if (_scratch.Length < needed)
        {
            _scratch = new byte[needed * 2];
        }

        var n = count > 0
            ? LeafWriter.WriteSub(_scratch, subject, queue, count)
            : LeafWriter.WriteUnsub(_scratch, subject, queue);
        link.Outbound.Write(_scratch.AsSpan(0, n));
    }

    /// <summary>The subscriptions on one subject (and queue) in one account, by the connection that holds them.</summary>
    private sealed class Interest(string subject, string? queue)
    {
        public string SubjectText { get; } = subject;

        public byte[] Subject { get; } = Encoding.UTF8.GetBytes(subject);

        public byte[] Queue { get; } = queue is null ? [] : Encoding.UTF8.GetBytes(queue);

        public Dictionary<Connection, Holding> BySource { get; } = new(ReferenceEqualityComparer.Instance);
    }

    /// <summary>How many subscriptions one connection holds on a subject (and queue), and the origin cluster of a route's.</summary>
    private sealed class Holding(string? origin)
    {
        public string? Origin { get; } = origin;

        public int Count { get; set; }
    }
}
