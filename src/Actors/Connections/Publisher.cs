using System.Buffers;
using System.Runtime.CompilerServices;
using Courier.Actors.Accounts;
using Courier.Actors.Hosting;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;

namespace Courier.Actors.Connections;

/// <summary>Where a publisher's messages come from: what the pipeline does differently for them.</summary>
internal enum PublisherKind
{
    /// <summary>A client (NATS or MQTT): its messages go to routes; it is stalled by slow consumers.</summary>
    Client,

    /// <summary>
    /// A route: its messages came from a peer, so they go to local subscribers only, and to a queue group
    /// only when the peer chose this node for it (one hop). Never stalled.
    /// </summary>
    Peer,

    /// <summary>One of Courier's own services: its batches are written and completed on its thread. Never stalled.</summary>
    Service,

    /// <summary>
    /// A leaf node link: its messages go to local subscribers, to routes (unless this node is the leaf
    /// of that link) and to other leaf links, never back to the link; to a queue group only when the
    /// other side chose this node for it. Never stalled.
    /// </summary>
    Leaf,

    /// <summary>
    /// An inbound gateway link: its messages came from another cluster, so they go to local subscribers,
    /// routes and leaf links, never to a gateway; to a queue group only when the other cluster chose this one
    /// for it. Never stalled.
    /// </summary>
    Gateway,
}

/// <summary>
/// One connection's way into the subject space, the publish pipeline every source of messages uses:
/// match (with a one-entry cache), one member per queue group, delivery to each subscription in the
/// subscriber's framing (<see cref="Connection.WriteMessage"/>), routes once each, imports across
/// accounts, and the deferred flush that signals each touched outbound once per read batch.
/// </summary>
/// <remarks>
/// Hot path (DESIGN §3): a cached match, one formatted control-line template, and a copy of the
/// payload into each subscriber's outbound. No allocation, no actor message, no lock held across I/O.
/// Used by one thread at a time: its connection's reader (or an in-process client's queue drainer).
/// </remarks>
internal sealed partial class Publisher
{
    // The MSG/HMSG control line parts shared by all deliveries of one publish. Per thread, not per
    // connection: a publish formats and uses it without awaiting, and idle connections stay small.
    [ThreadStatic]
    private static byte[]? _threadMsgTemplate;

    private static long _lastBatchId;

    /// <summary>Messages in a read batch up to which deliveries are written inline (see <see cref="Flush"/>).</summary>
    private const int InlineFlushMaxMessages = 16;

    // One-entry match cache: publishers usually repeat a subject. Valid while the space's version
    // is the one read before the match was computed.
    private const int LastSubjectCapacity = 128; // bytes; longer subjects use the shared cache only

    private readonly Connection _source;
    private readonly PublisherKind _kind;
    private readonly int _msgTemplateSize;

    // Outbound buffers touched during the current read batch, signalled once at its end.
    private readonly List<Outbound> _touched = [];
    private List<Outbound>? _stalledOn; // made at the first stall: most connections never have one
    private long _batchId = NextBatchId();
    private long _inMsgsAtBatchStart;
    private uint _queuePick = (uint)Random.Shared.Next();
    private Account _account;
    private byte[]? _lastSubject; // allocated at the first publish: idle connections stay small
    private int _lastSubjectLength;
    private long _lastSubjectVersion = -1; // no space version is negative: nothing cached yet
    private MatchResult _lastMatch = MatchResult.Empty;

    public Publisher(Connection source, PublisherKind kind, Account account, int maxControlLine)
    {
        _source = source;
        _kind = kind;
        _account = account;
        _msgTemplateSize = (maxControlLine * 2) + 64; // two control lines' worth of subject and reply
        ToRoutes = kind != PublisherKind.Peer;
    }

    /// <summary>
    /// Whether this source's messages go on to routes: not a route's (one hop), nor those a leaf gets
    /// from its hub (the cluster's other nodes have their own links to the hub).
    /// </summary>
    public bool ToRoutes { get; set; }

    /// <summary>The account published into now: the connection's, another's during an import or a route's RMSG.</summary>
    public Account Account => _account;

    /// <summary>Whether the source gets its own messages (a NATS client's CONNECT <c>echo</c>).</summary>
    public bool Echo { get; set; } = true;

    /// <summary>The connection this publisher publishes for (an MQTT 5.0 No Local subscription skips it).</summary>
    public Connection Source => _source;

    /// <summary>Messages published (counted by <see cref="Publish"/> and <see cref="Count"/>).</summary>
    public long InMsgs { get; private set; }

    /// <summary>Payload bytes published.</summary>
    public long InBytes { get; private set; }

    /// <summary>The QoS of the MQTT PUBLISH being routed now (0 otherwise): what MQTT subscribers get at most.</summary>
    public byte InboundQoS { get; set; }

    /// <summary>Set while the MQTT PUBLISH being routed is retained (under the retained gate).</summary>
    public bool InboundRetain { get; set; }

    /// <summary>
    /// Set when a delivery reached a service that holds the publisher's acknowledgements (the MQTT
    /// sessions' capture); the MQTT connection acknowledges after the sessions journaled, and clears it.
    /// </summary>
    public bool ReachedAckHolder { get; set; }

    /// <summary>Consumers this batch filled past half their max_pending: the reader waits for them before reading more.</summary>
    public bool HasStalled => _stalledOn is { Count: > 0 };

    // Twice the template size: the second half holds the header-less MSG variant (see MsgTemplates).
    private byte[] MsgTemplate => _threadMsgTemplate is { } t && t.Length >= 2 * _msgTemplateSize
        ? t
        : _threadMsgTemplate = new byte[2 * _msgTemplateSize];

    private static long NextBatchId() => Interlocked.Increment(ref _lastBatchId);

    /// <summary>Counts one message of <paramref name="size"/> bytes from the source (one the source refused included).</summary>
    public void Count(int size)
    {
        InMsgs++;
        InBytes += size;
    }

    /// <summary>Counts, matches and delivers one message; true when anyone got it.</summary>
    /// <param name="subject">The subject routed on.</param>
    /// <param name="messageSubject">The subject on the delivered MSG line: the same, except for JetStream deliveries.</param>
    /// <param name="replyTo">The reply subject, or empty.</param>
    /// <param name="headerSize">The header block size, -1 without headers.</param>
    /// <param name="payload">Headers and payload.</param>
    /// <param name="routedQueues">
    /// For a message from a route (RMSG): the queue groups it is for here, as on the line; only local
    /// members of those groups and local plain subscribers get it (one hop).
    /// </param>
    public bool Publish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> messageSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> routedQueues = default)
    {
        Count((int)payload.Length);
        if (IsGatewayReply(subject))
        {
            return SendMappedReply(subject, replyTo, headerSize, payload);
        }

        var match = Match(subject);
        return !match.IsEmpty && Deliver(match, subject, messageSubject, replyTo, headerSize, payload, routedQueues);
    }

    /// <summary>The subscriptions <paramref name="subject"/> reaches in the current account (cached for a repeated subject).</summary>
    public MatchResult Match(ReadOnlySpan<byte> subject)
    {
        var space = _account.Space;
        var version = space.Version;
        if (version == _lastSubjectVersion && subject.SequenceEqual(_lastSubject.AsSpan(0, _lastSubjectLength)))
        {
            return _lastMatch;
        }

        var match = space.Match(subject);
        if (subject.Length <= LastSubjectCapacity)
        {
            _lastSubject ??= new byte[LastSubjectCapacity];
            subject.CopyTo(_lastSubject);
            _lastSubjectLength = subject.Length;
            _lastSubjectVersion = version;
            _lastMatch = match;
        }

        return match;
    }

    /// <summary>Makes <paramref name="account"/> the one published into (the cached match was for another's space).</summary>
    public void SwitchAccount(Account account)
    {
        _account = account;
        _lastSubjectVersion = -1;
    }

    /// <summary>
    /// Delivers one publish to the subscriptions of a match: plain ones, one member per queue group,
    /// the routes noted on the way, then the service imports reached. True when anyone got it.
    /// </summary>
    public bool Deliver(MatchResult match, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> messageSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> routedQueues)
    {
        if (headerSize == 0)
        {
            headerSize = -1; // An empty header block is delivered as a plain MSG, as nats-server.
        }

        var size = (int)payload.Length;
        var template = MsgTemplate;
        if (!ProtocolWriter.TryFormatMsgTemplate(template.AsSpan(0, _msgTemplateSize), messageSubject, replyTo, headerSize, size, out var prefixLength, out var suffixLength))
        {
            return false; // Unreachable: the template buffer holds two control lines.
        }

        var templates = new MsgTemplates(template, prefixLength, suffixLength, _msgTemplateSize, messageSubject, replyTo, headerSize, size);
        var delivered = false;

        // Routes get a message once each, whatever number of their subscriptions match; never one
        // that came from a route (one hop).
        var toRoutes = ToRoutes;
        foreach (var sub in match.Plain)
        {
            if (sub.Client is RouteConnection route)
            {
                if (toRoutes)
                {
                    AddRouteTarget(route, null);
                }

                continue;
            }

            if (sub.Client is LeafConnection leaf)
            {
                if (ToLeaf(leaf))
                {
                    AddLeafTarget(leaf, null);
                }

                continue;
            }

            if (sub.Client is GatewayConnection gateway)
            {
                if (ToGateways)
                {
                    AddGatewayTarget(gateway, null);
                }

                continue;
            }

            if (!Echo && ReferenceEquals(sub.Client, _source))
            {
                continue;
            }

            delivered |= Deliver(sub, ref templates, payload);
        }

        foreach (var group in match.Queues)
        {
            if (_kind is PublisherKind.Peer or PublisherKind.Leaf or PublisherKind.Gateway && _importDepth == 0 && !RoutedQueuesContain(routedQueues, group.NameUtf8))
            {
                continue;
            }

            delivered |= DeliverToOneMember(group, ref templates, payload, toRoutes);
        }

        if (_routeTargets is { Count: > 0 })
        {
            // A JetStream delivery matches on its deliver subject but shows the message's own subject:
            // routes get it at the end of the reply, <reply>@<subject>, as nats-server's processMsgResults.
            delivered |= messageSubject == subject || replyTo.IsEmpty
                ? SendToRoutes(subject, replyTo, headerSize, payload)
                : SendToRoutes(subject, JetStreamRouteReply(replyTo, messageSubject), headerSize, payload);
        }

        if (_leafTargets is { Count: > 0 })
        {
            delivered |= messageSubject == subject || replyTo.IsEmpty
                ? SendToLeafs(subject, replyTo, headerSize, payload)
                : SendToLeafs(subject, JetStreamRouteReply(replyTo, messageSubject), headerSize, payload);
        }

        if (_gatewayTargets is { Count: > 0 })
        {
            delivered |= SendToGateways(subject, replyTo, headerSize, payload);
        }

        if (_importHits is { Count: > 0 })
        {
            ProcessImportHits(subject, replyTo, headerSize, payload);
        }

        return delivered;
    }

    private bool DeliverToOneMember(QueueGroup group, ref MsgTemplates templates, in ReadOnlySequence<byte> payload, bool toRoutes)
    {
        // As nats-server 2.9's processMsgResults: start at a pseudo-random member, where a route's
        // member counts as many times as its RS+ weight (the peer's member count), and take the first
        // that accepts: a local member that can take it (echo, auto-unsubscribe and closed members are
        // passed over), or a route, which then carries the message for this group. So each message
        // reaches exactly one member cluster-wide. A message from a route goes to local members only.
        // A leaf link's member is the last resort: taken only when no local member or route took it.
        var members = group.Members;
        _queuePick = (_queuePick * 1664525) + 1013904223; // LCG step (Numerical Recipes constants).
        var total = 0;
        foreach (var member in members)
        {
            total += Share(member, toRoutes);
        }

        var start = 0;
        if (total > 0)
        {
            var pick = (int)((_queuePick >> 8) % (uint)total);
            for (; start < members.Length - 1; start++)
            {
                pick -= Share(members[start], toRoutes);
                if (pick < 0)
                {
                    break;
                }
            }
        }

        LeafConnection? lastResort = null;
        GatewayConnection? otherCluster = null;
        for (var i = 0; i < members.Length; i++)
        {
            var sub = members[(start + i) % members.Length];
            if (sub.Client is RouteConnection route)
            {
                if (toRoutes)
                {
                    AddRouteTarget(route, group);
                    return false; // delivered once SendToRoutes has queued it
                }

                continue;
            }

            if (sub.Client is LeafConnection leaf)
            {
                if (lastResort is null && ToLeaf(leaf))
                {
                    lastResort = leaf;
                }

                continue;
            }

            if (sub.Client is GatewayConnection gateway)
            {
                if (otherCluster is null && ToGateways)
                {
                    otherCluster = gateway;
                }

                continue;
            }

            if (!Echo && ReferenceEquals(sub.Client, _source))
            {
                continue;
            }

            if (Deliver(sub, ref templates, payload))
            {
                return true;
            }
        }

        if (lastResort is not null)
        {
            AddLeafTarget(lastResort, group);
        }
        else if (otherCluster is not null)
        {
            // No member in this cluster took it: another cluster's (nats-server's sendMsgToGateways after processMsgResults).
            AddGatewayTarget(otherCluster, group);
        }

        return false;
    }

    // A member's share of the pick: a local member 1, a route's member its weight, a leaf link's none (the last resort).
    private static int Share(Subscription member, bool toRoutes) => member.Client switch
    {
        RouteConnection => toRoutes ? member.Weight : 0,
        LeafConnection => 0,
        GatewayConnection => 0,
        _ => 1,
    };

    private bool Deliver(Subscription sub, ref MsgTemplates templates, in ReadOnlySequence<byte> payload)
    {
        if (sub.Import is { } import)
        {
            return DeliverImport(sub, import, ref templates, payload);
        }

        var target = sub.Client;
        if (target.DeliveryFilter is { } filter && filter.DeniesDelivery(templates.Subject))
        {
            return false;
        }

        var claim = sub.TryClaimDelivery();
        if (claim < 0 || !target.WriteMessage(sub, ref templates, payload, this))
        {
            return false;
        }

        Delivered(target, sub, claim, templates.ReplyTo);
        return true;
    }

    /// <summary>
    /// What follows a written delivery, directly or through an import: the reply tracked for
    /// allow_responses, the target marked for this batch's flush, an auto-unsubscribe's last message
    /// removing its subscription.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Delivered(Connection target, Subscription sub, int claim, ReadOnlySpan<byte> replyTo)
    {
        if (target.Permissions is { TracksReplies: true } permissions && !replyTo.IsEmpty)
        {
            permissions.TrackReply(replyTo);
        }

        Touch(target.Outbound);
        if (claim > 0)
        {
            target.RemoveAfterLastDelivery(sub);
        }
    }

    /// <summary>Notes an outbound to signal at the end of this read batch, once per batch.</summary>
    /// <remarks>
    /// Batch ids are unique across the node, so an outbound marked with this batch's id was added by
    /// this batch. Another publisher overwriting the mark only causes a harmless duplicate signal.
    /// </remarks>
    public void Touch(Outbound outbound)
    {
        if (outbound.TouchedInBatch == _batchId)
        {
            return;
        }

        outbound.TouchedInBatch = _batchId;
        _touched.Add(outbound);
    }

    /// <summary>
    /// Deferred flush: wakes each touched outbound's write pump (or completes its in-process
    /// subscriber) once for the whole read batch, and notes the consumers so far behind that this
    /// producer should wait for them. Returns whether the batch was a client's small one
    /// (latency-bound: see <see cref="IdlePoll"/>).
    /// </summary>
    public bool Flush()
    {
        // A small batch is latency-bound (request/reply): write it from this thread. A large one is
        // throughput-bound: hand it to the pumps so another core writes while this one parses. An
        // in-process subscriber is completed from here (a call: the hand-over to its actor), so a pool
        // hop would be pure cost. And a service's own batches (a stream's PubAcks, a consumer's
        // delivery pass) are written by the service's thread, which has nothing else to parse.
        var small = InMsgs - _inMsgsAtBatchStart <= InlineFlushMaxMessages;
        var service = _kind == PublisherKind.Service;
        var inline = service || small;
        _inMsgsAtBatchStart = InMsgs;

        // A client's small batch also runs the services it fed (a memory stream's append and PubAck) on
        // this thread, as nats-server stores on the reading goroutine (Hosting/CallerRunsExecutor.cs).
        var readerTurn = small && !service;
        if (readerTurn)
        {
            CallerRunsExecutorConfigurator.CallerTurn = true;
        }

        try
        {
            // Only client producers are stalled, as nats-server: routes and services never are.
            var stalls = _kind == PublisherKind.Client;
            foreach (var outbound in _touched)
            {
                outbound.Signal(inline || outbound.InProcess);
                if (stalls && outbound.IsStalling && !(_stalledOn ??= []).Contains(outbound))
                {
                    _stalledOn.Add(outbound);
                }
            }
        }
        finally
        {
            if (readerTurn)
            {
                CallerRunsExecutorConfigurator.CallerTurn = false;
            }
        }

        _touched.Clear();
        _batchId = NextBatchId();
        return readerTurn;
    }

    /// <summary>
    /// Fast-producer stall, as nats-server: before reading more, wait (bounded) for consumers that
    /// have more than half of max_pending queued. Rare path; may allocate.
    /// </summary>
    public async Task WaitForStalledConsumersAsync()
    {
        var stalledOn = _stalledOn!;
        foreach (var outbound in stalledOn)
        {
            var drained = outbound.WaitForDrainAsync();
            if (!drained.IsCompleted)
            {
                // WaitAsync drops its timer when the drain comes first (a Task.Delay would stay queued).
                await drained.WaitAsync(outbound.StallDuration).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
        }

        stalledOn.Clear();
    }
}
