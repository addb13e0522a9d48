using System.Buffers;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// A publish to leaf node links: a link is just another subscriber on the publish path (the other
/// side's LS+ interest sits in the subject space as subscriptions of its <see cref="LeafConnection"/>),
/// but it gets each message once, as one LMSG/HMSG frame naming the queue groups it was chosen for
/// (DESIGN.md §3).
/// </summary>
internal sealed partial class Publisher
{
    // Per publish: the leaf links the message goes to, and for each queue group sent over a link, which
    // link (made at the first: a node without leaf links never needs them).
    private List<LeafConnection>? _leafTargets;
    private List<(LeafConnection Leaf, QueueGroup Group)>? _leafGroups;

    private static readonly List<(LeafConnection Leaf, QueueGroup Group)> NoLeafGroups = [];

    /// <summary>
    /// A route's message that a peer sent as nats-server's LMSG (lnoc): the cluster of the leaf link it came
    /// from there, so it does not go back into that cluster. Set by the route link before each publish.
    /// </summary>
    public string? Origin { get; set; }

    /// <summary>
    /// Whether this publish may go over <paramref name="leaf"/>, as nats-server's processMsgResults: never
    /// back over the link it came from, nor back into the cluster it came from; from a route only to the
    /// links this node is the hub of (a leaf's other nodes have their own link to the hub), and not into the
    /// cluster of the leaf link it came from on the peer (<see cref="Origin"/>).
    /// </summary>
    private bool ToLeaf(LeafConnection leaf)
    {
        if (ReferenceEquals(leaf, _source))
        {
            return false;
        }

        if (_kind == PublisherKind.Peer)
        {
            return !leaf.Link.Solicited && (Origin is null || Origin != leaf.Link.RemoteCluster);
        }

        return _kind != PublisherKind.Leaf
            || leaf.Link.RemoteCluster is not { Length: > 0 } cluster
            || cluster != ((LeafConnection)_source).Link.RemoteCluster;
    }

    /// <summary>Notes a leaf link this publish goes to (once per link), and the queue group it carries for it, if any.</summary>
    private void AddLeafTarget(LeafConnection leaf, QueueGroup? group)
    {
        var targets = _leafTargets ??= [];
        if (!targets.Contains(leaf))
        {
            targets.Add(leaf);
        }

        if (group is not null)
        {
            (_leafGroups ??= []).Add((leaf, group));
        }
    }

    /// <summary>
    /// Appends the publish to each leaf link noted: <c>LMSG &lt;subject&gt; [reply] &lt;size&gt;</c>, or with the queue
    /// groups the link was chosen for, <c>LMSG &lt;subject&gt; + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c> (<c>|</c>
    /// without a reply); HMSG with the header size for a message with headers. A subject the remote's
    /// <c>deny_exports</c> names stays here.
    /// </summary>
    private bool SendToLeafs(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var delivered = false;
        var size = (int)payload.Length;
        var targets = _leafTargets!;
        var groups = _leafGroups ?? NoLeafGroups;
        foreach (var leaf in targets)
        {
            var link = leaf.Link;
            if ((headerSize >= 0 && !link.Headers) || (link.HasExportDenies && link.ExportDenied(subject)))
            {
                continue;
            }

            var line = _threadRouteLine ??= new byte[_msgTemplateSize + 256];
            var queuesLength = 0;
            foreach (var (target, group) in groups)
            {
                if (ReferenceEquals(target, leaf))
                {
                    queuesLength += group.NameUtf8.Length + 1;
                }
            }

            var needed = subject.Length + replyTo.Length + queuesLength + 64;
            if (line.Length < needed * 2)
            {
                _threadRouteLine = line = new byte[needed * 2];
            }

            // The queue names, separated by spaces, at the end of the buffer; the line goes at its start.
            var queuesAt = line.Length - queuesLength;
            var q = queuesAt;
            foreach (var (target, group) in groups)
            {
                if (ReferenceEquals(target, leaf))
                {
                    if (q > queuesAt)
                    {
                        line[q++] = (byte)' ';
                    }

                    group.NameUtf8.CopyTo(line, q);
                    q += group.NameUtf8.Length;
                }
            }

            var n = LeafWriter.WriteMsgLine(line.AsSpan(0, queuesAt), subject, replyTo, line.AsSpan(queuesAt, q - queuesAt), headerSize, size);
            if (n > 0 && leaf.Outbound.WriteMsg(line.AsSpan(0, n), default, default, payload))
            {
                Touch(leaf.Outbound);
                delivered = true;
            }
        }

        targets.Clear();
        _leafGroups?.Clear();
        return delivered;
    }
}
