using System.Buffers;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>
/// A publish to routes: a route is just another subscriber on the publish path (its RS+ interest sits
/// in the subject space as subscriptions of its <see cref="RouteConnection"/>), but it gets each message
/// once, as one RMSG/HMSG frame naming the queue groups it was chosen for (DESIGN.md §3).
/// </summary>
internal sealed partial class Publisher
{
    // A JetStream delivery's reply with its subject appended (per thread; see JetStreamRouteReply).
    [ThreadStatic]
    private static byte[]? _threadJetStreamReply;

    // The RMSG line of one publish (per thread, as the MSG template).
    [ThreadStatic]
    private static byte[]? _threadRouteLine;

    // Per publish: the routes the message goes to, and for each queue group routed, which route (made
    // at the first: a node without routes never needs them, and each costs memory per connection).
    private List<RouteConnection>? _routeTargets;
    private List<(RouteConnection Route, QueueGroup Group)>? _routedGroups;

    private static readonly List<(RouteConnection Route, QueueGroup Group)> NoRoutedGroups = [];

    /// <summary>Notes a route this publish goes to (once per route), and the queue group it carries for it, if any.</summary>
    private void AddRouteTarget(RouteConnection route, QueueGroup? group)
    {
        var targets = _routeTargets ??= [];
        if (!targets.Contains(route))
        {
            targets.Add(route);
        }

        if (group is not null)
        {
            (_routedGroups ??= []).Add((route, group));
        }
    }

    /// <summary>
    /// Appends the publish to each route noted: <c>RMSG $G &lt;subject&gt; [reply] &lt;size&gt;</c>, or with
    /// the queue groups the route was chosen for, <c>RMSG $G &lt;subject&gt; + &lt;reply&gt; &lt;queues&gt; &lt;size&gt;</c>
    /// (<c>|</c> without a reply); HMSG with the header size for a message with headers.
    /// </summary>
    private bool SendToRoutes(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var delivered = false;
        var size = (int)payload.Length;
        var targets = _routeTargets!;
        var groups = _routedGroups ?? NoRoutedGroups;

        // A message from a leaf link of a named cluster goes with that origin to routes that read it (nats-server's lnoc LMSG).
        var origin = _source is LeafConnection leaf ? leaf.Link.RemoteClusterUtf8 : [];
        foreach (var route in targets)
        {
            if (headerSize >= 0 && !route.Link.Headers)
            {
                continue; // the peer cannot take headers
            }

            var line = _threadRouteLine ??= new byte[_msgTemplateSize + 256];
            var queuesLength = 0;
            foreach (var (target, group) in groups)
            {
                if (ReferenceEquals(target, route))
                {
                    queuesLength += group.NameUtf8.Length + 1;
                }
            }

            var needed = origin.Length + subject.Length + replyTo.Length + queuesLength + 64;
            if (line.Length < needed * 2)
            {
                _threadRouteLine = line = new byte[needed * 2];
            }

            // The queue names, separated by spaces, at the end of the buffer; the line goes at its start.
            var queuesAt = line.Length - queuesLength;
            var q = queuesAt;
            foreach (var (target, group) in groups)
            {
                if (ReferenceEquals(target, route))
                {
                    if (q > queuesAt)
                    {
                        line[q++] = (byte)' ';
                    }

                    group.NameUtf8.CopyTo(line, q);
                    q += group.NameUtf8.Length;
                }
            }

            var n = RouteWriter.WriteMsgLine(line.AsSpan(0, queuesAt), route.Link.Lnoc ? origin : default, _account.NameUtf8, subject, replyTo, line.AsSpan(queuesAt, q - queuesAt), headerSize, size);
            if (n > 0 && route.Outbound.WriteMsg(line.AsSpan(0, n), default, default, payload))
            {
                Touch(route.Outbound);
                delivered = true;
            }
        }

        targets.Clear();
        _routedGroups?.Clear();
        return delivered;
    }

    /// <summary><c>&lt;reply&gt;@&lt;subject&gt;</c> in a buffer of the thread's: a JetStream delivery's reply on a route.</summary>
    private static ReadOnlySpan<byte> JetStreamRouteReply(ReadOnlySpan<byte> replyTo, ReadOnlySpan<byte> messageSubject)
    {
        var length = replyTo.Length + 1 + messageSubject.Length;
        var buffer = _threadJetStreamReply is { } existing && existing.Length >= length ? existing : (_threadJetStreamReply = new byte[length * 2]);
        replyTo.CopyTo(buffer);
        buffer[replyTo.Length] = (byte)'@';
        messageSubject.CopyTo(buffer.AsSpan(replyTo.Length + 1));
        return buffer.AsSpan(0, length);
    }

    /// <summary>Whether an RMSG's queue list names <paramref name="name"/>.</summary>
    private static bool RoutedQueuesContain(ReadOnlySpan<byte> queues, ReadOnlySpan<byte> name)
    {
        while (RouteParser.NextQueue(ref queues, out var queue))
        {
            if (queue.SequenceEqual(name))
            {
                return true;
            }
        }

        return false;
    }
}
