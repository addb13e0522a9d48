using System.Buffers;
using Courier.Actors.Gateway;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// A publish to gateway links: an outbound link is just another subscriber on the publish path (the
/// remote cluster's RS+ interest sits in the subject space as subscriptions of its
/// <see cref="GatewayConnection"/>), but it gets each message once, as one RMSG/HMSG frame with the account,
/// naming the queue groups it was chosen for, its reply mapped to <c>_GR_.&lt;cluster&gt;.&lt;server&gt;.</c>
/// (nats-server's sendMsgToGateways; DESIGN.md §3).
/// </summary>
internal sealed partial class Publisher
{
    // Per thread: a mapped reply is built here (no allocation per message).
    [ThreadStatic]
    private static byte[]? _threadGatewayReply;

    // Per publish: the gateway links the message goes to, and the queue group carried for one (made at the first).
    private List<GatewayConnection>? _gatewayTargets;
    private List<(GatewayConnection Gateway, QueueGroup Group)>? _gatewayGroups;

    private static readonly List<(GatewayConnection Gateway, QueueGroup Group)> NoGatewayGroups = [];

    /// <summary>The node's gateway links; null without <c>gateway { }</c>.</summary>
    public GatewayTable? Gateways { get; init; }

    /// <summary>
    /// Whether this publish goes to other clusters: a client's, a service's or a leaf's, not one that came from
    /// a route (the node that took it from its client sent it) nor from another cluster (one hop).
    /// </summary>
    private bool ToGateways => _kind is PublisherKind.Client or PublisherKind.Service or PublisherKind.Leaf;

    /// <summary>Whether <paramref name="subject"/> is a mapped reply (<c>_GR_.</c>) on a node with gateways: <see cref="SendMappedReply"/> routes it.</summary>
    public bool IsGatewayReply(ReadOnlySpan<byte> subject) =>
        Gateways is not null && subject.Length > GatewayReply.SubjectOffset && subject[0] == (byte)'_' && GatewayReply.IsMapped(subject);

    private void AddGatewayTarget(GatewayConnection gateway, QueueGroup? group)
    {
        var targets = _gatewayTargets ??= [];
        if (!targets.Contains(gateway))
        {
            targets.Add(gateway);
        }

        if (group is not null)
        {
            (_gatewayGroups ??= []).Add((gateway, group));
        }
    }

    /// <summary>
    /// Appends the publish to each gateway link noted: <c>RMSG &lt;account&gt; &lt;subject&gt; [reply] &lt;size&gt;</c>, or
    /// with the queue groups the link was chosen for, <c>RMSG &lt;account&gt; &lt;subject&gt; + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c>
    /// (<c>|</c> without a reply); HMSG with the header size for a message with headers.
    /// </summary>
    private bool SendToGateways(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var delivered = false;
        var size = (int)payload.Length;
        var targets = _gatewayTargets!;
        var groups = _gatewayGroups ?? NoGatewayGroups;
        var reply = MapReply(replyTo);
        var account = _account.NameUtf8;
        foreach (var gateway in targets)
        {
            if (headerSize >= 0 && !gateway.Link.Headers)
            {
                continue;
            }

            delivered |= WriteRouted(gateway, account, subject, reply, headerSize, size, payload, groups);
        }

        targets.Clear();
        _gatewayGroups?.Clear();
        return delivered;
    }

    /// <summary>
    /// A publish on a mapped reply, <c>_GR_.&lt;cluster hash&gt;.&lt;server hash&gt;.&lt;reply&gt;</c>: straight to the gateway
    /// of that cluster whatever its interest (nats-server's sendMsgToGateways directSend); one for this
    /// cluster is delivered here on its original subject.
    /// </summary>
    public bool SendMappedReply(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var table = Gateways!;
        var hash = GatewayReply.ClusterHash(subject);
        if (hash.SequenceEqual(table.ClusterHash))
        {
            var original = GatewayReply.Unmapped(subject);
            var match = Match(original);
            return !match.IsEmpty && Deliver(match, original, original, replyTo, headerSize, payload, default);
        }

        if (!ToGateways)
        {
            return false;
        }

        foreach (var gateway in table.Outbound)
        {
            if (hash.SequenceEqual(gateway.Link.ClusterHash) && (headerSize < 0 || gateway.Link.Headers))
            {
                return WriteRouted(gateway, _account.NameUtf8, subject, replyTo, headerSize, (int)payload.Length, payload, NoGatewayGroups);
            }
        }

        return false;
    }

    // The reply as sent to other clusters: _GR_.<cluster>.<server>.<reply>, unless empty or mapped already.
    private ReadOnlySpan<byte> MapReply(ReadOnlySpan<byte> replyTo)
    {
        if (replyTo.IsEmpty || GatewayReply.IsMapped(replyTo))
        {
            return replyTo;
        }

        var prefix = Gateways!.ReplyPrefix;
        var needed = prefix.Length + replyTo.Length;
        var buffer = _threadGatewayReply is { } b && b.Length >= needed ? b : _threadGatewayReply = new byte[Math.Max(needed, 256)];
        prefix.CopyTo(buffer, 0);
        replyTo.CopyTo(buffer.AsSpan(prefix.Length));
        return buffer.AsSpan(0, needed);
    }

    private bool WriteRouted(GatewayConnection gateway, ReadOnlySpan<byte> account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> reply, int headerSize, int size, in ReadOnlySequence<byte> payload, List<(GatewayConnection Gateway, QueueGroup Group)> groups)
    {
        var line = _threadRouteLine ??= new byte[_msgTemplateSize + 256];
        var queuesLength = 0;
        foreach (var (target, group) in groups)
        {
            if (ReferenceEquals(target, gateway))
            {
                queuesLength += group.NameUtf8.Length + 1;
            }
        }

        var needed = account.Length + subject.Length + reply.Length + queuesLength + 64;
        if (line.Length < needed * 2)
        {
            _threadRouteLine = line = new byte[needed * 2];
        }

        // The queue names, separated by spaces, at the end of the buffer; the line goes at its start.
        var queuesAt = line.Length - queuesLength;
        var q = queuesAt;
        foreach (var (target, group) in groups)
        {
            if (ReferenceEquals(target, gateway))
            {
                if (q > queuesAt)
                {
                    line[q++] = (byte)' ';
                }

                group.NameUtf8.CopyTo(line, q);
                q += group.NameUtf8.Length;
            }
        }

        var n = RouteWriter.WriteMsgLine(line.AsSpan(0, queuesAt), account, subject, reply, line.AsSpan(queuesAt, q - queuesAt), headerSize, size);
        if (n > 0 && gateway.Outbound.WriteMsg(line.AsSpan(0, n), default, default, payload))
        {
            Touch(gateway.Outbound);
            return true;
        }

        return false;
    }
}
