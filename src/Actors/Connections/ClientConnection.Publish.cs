using System.Buffers;
using System.Runtime.CompilerServices;
using System.Text;
using Courier.Actors.Hosting;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

internal sealed partial class ClientConnection
{
    // The MSG/HMSG control line parts shared by all deliveries of one publish. Per thread, not per
    // connection: a publish formats and uses it without awaiting, and idle connections stay small.
    [ThreadStatic]
    private static byte[]? _threadMsgTemplate;

    // Twice the template size: the second half holds the header-less MSG variant (see Templates).
    private byte[] MsgTemplate => _threadMsgTemplate is { } t && t.Length >= 2 * _msgTemplateSize
        ? t
        : _threadMsgTemplate = new byte[2 * _msgTemplateSize];

    // Outbound buffers touched during the current read batch, signalled once at its end.
    private readonly List<Outbound> _touched = [];
    private long _batchId = NextBatchId();

    private static long _lastBatchId;

    private static long NextBatchId() => Interlocked.Increment(ref _lastBatchId);
    private uint _queuePick = (uint)Random.Shared.Next();

    // One-entry match cache: publishers usually repeat a subject. Valid while the space's version
    // is the one read before the match was computed.
    private const int LastSubjectCapacity = 128; // bytes; longer subjects use the shared cache only
    private byte[]? _lastSubject; // allocated at the first publish: idle connections stay small
    private int _lastSubjectLength;
    private long _lastSubjectVersion = -1; // no space version is negative: nothing cached yet
    private MatchResult _lastMatch = MatchResult.Empty;

    /// <summary>
    /// Delivers one message to every matching subscription (one member per queue group).
    /// </summary>
    /// <remarks>
    /// Hot path: a cached match, one formatted control-line template, and a copy of the payload into
    /// each subscriber's outbound buffer. No allocation, no actor message, no lock held across I/O.
    /// </remarks>
    /// <param name="subject">The subject routed on.</param>
    /// <param name="messageSubject">The subject on the delivered MSG line: the same, except for JetStream deliveries.</param>
    /// <param name="replyTo">The reply subject, or empty.</param>
    /// <param name="headerSize">The header block size, -1 without headers.</param>
    /// <param name="payload">Headers and payload.</param>
    /// <param name="routedQueues">
    /// For a message from a route (RMSG): the queue groups it is for here, as on the line; only local
    /// members of those groups and local plain subscribers get it (one hop).
    /// </param>
    private void ProcessPublish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> messageSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> routedQueues = default)
    {
        if (BeginPublish(subject, replyTo, (int)payload.Length, out var match))
        {
            CompletePublish(match, subject, messageSubject, replyTo, headerSize, payload, routedQueues);
        }
    }

    /// <summary>
    /// A client's PUB or HPUB, as the other overload; the payload's slice of the read buffer is taken
    /// only once someone is to receive it (a publish nobody receives costs no slicing).
    /// </summary>
    private void ProcessClientPublish(scoped in ClientCommand command)
    {
        if (BeginPublish(command.Subject, command.ReplyTo, (int)command.PayloadLength, out var match))
        {
            CompletePublish(match, command.Subject, command.Subject, command.ReplyTo, command.HeaderSize, command.Payload, default);
        }
    }

    /// <summary>
    /// What every publish does before delivery: counts it, checks permissions and the subject, sends
    /// +OK, and matches. False when there is nothing to deliver (no-responders already answered).
    /// </summary>
    private bool BeginPublish(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int size, out MatchResult match)
    {
        InMsgs++;
        InBytes += size;

        if (_permissions is not null && !_permissions.CanPublish(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.PublishViolation(Encoding.UTF8.GetString(subject))));
            match = null!;
            return false;
        }

        if (_pedantic && !SubjectRules.IsValidLiteralSubject(subject))
        {
            WriteOwn(ProtocolWriter.Error(NatsErrors.InvalidPublishSubject));
        }

        if (_verbose)
        {
            WriteOwn(ProtocolWriter.Ok);
        }

        match = Match(subject);
        if (match.IsEmpty)
        {
            if (_noResponders && !replyTo.IsEmpty)
            {
                SendNoResponders(replyTo);
            }

            return false;
        }

        return true;
    }

    private void CompletePublish(MatchResult match, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> messageSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> routedQueues)
    {
        if (headerSize == 0)
        {
            headerSize = -1; // An empty header block is delivered as a plain MSG, as nats-server.
        }

        var delivered = DeliverMatch(match, subject, messageSubject, replyTo, headerSize, payload, routedQueues);
        if (!delivered && _noResponders && !replyTo.IsEmpty)
        {
            SendNoResponders(replyTo);
        }
    }

    /// <summary>
    /// Delivers one publish to the subscriptions of a match: plain ones, one member per queue group,
    /// the routes noted on the way, then the service imports reached. True when anyone got it.
    /// </summary>
    private bool DeliverMatch(MatchResult match, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> messageSubject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload, ReadOnlySpan<byte> routedQueues)
    {
        var size = (int)payload.Length;
        var template = MsgTemplate;
        if (!ProtocolWriter.TryFormatMsgTemplate(template.AsSpan(0, _msgTemplateSize), messageSubject, replyTo, headerSize, size, out var prefixLength, out var suffixLength))
        {
            return false; // Unreachable: the template buffer holds two control lines.
        }

        var templates = new Templates(template, prefixLength, suffixLength, _msgTemplateSize, messageSubject, replyTo, headerSize, size);
        var delivered = false;

        // Routes get a message once each, whatever number of their subscriptions match; never one
        // that came from a route (one hop).
        var toRoutes = _route is null;
        foreach (var sub in match.Plain)
        {
            if (sub.Client._route is not null)
            {
                if (toRoutes)
                {
                    AddRouteTarget(sub.Client, null);
                }

                continue;
            }

            if (!_echo && ReferenceEquals(sub.Client, this))
            {
                continue;
            }

            delivered |= Deliver(sub, ref templates, payload);
        }

        foreach (var group in match.Queues)
        {
            if (_route is not null && _importDepth == 0 && !RoutedQueuesContain(routedQueues, group.NameUtf8))
            {
                continue;
            }

            delivered |= DeliverToOneMember(group, ref templates, payload, toRoutes);
        }

        if (_routeTargets.Count > 0)
        {
            // A JetStream delivery matches on its deliver subject but shows the message's own subject:
            // routes get it at the end of the reply, <reply>@<subject>, as nats-server's processMsgResults.
            delivered |= messageSubject == subject || replyTo.IsEmpty
                ? SendToRoutes(subject, replyTo, headerSize, payload)
                : SendToRoutes(subject, JetStreamRouteReply(replyTo, messageSubject), headerSize, payload);
        }

        if (_importHits.Count > 0)
        {
            ProcessImportHits(subject, replyTo, headerSize, payload);
        }

        return delivered;
    }

    private MatchResult Match(ReadOnlySpan<byte> subject)
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

    private bool DeliverToOneMember(QueueGroup group, ref Templates templates, in ReadOnlySequence<byte> payload, bool toRoutes)
    {
        // As nats-server 2.9's processMsgResults: start at a pseudo-random member, where a route's
        // member counts as many times as its RS+ weight (the peer's member count), and take the first
        // that accepts: a local member that can take it (echo, auto-unsubscribe and closed members are
        // passed over), or a route, which then carries the message for this group. So each message
        // reaches exactly one member cluster-wide. A message from a route goes to local members only.
        var members = group.Members;
        _queuePick = (_queuePick * 1664525) + 1013904223; // LCG step (Numerical Recipes constants).
        var total = 0;
        foreach (var member in members)
        {
            total += member.Client._route is null ? 1 : (toRoutes ? member.Weight : 0);
        }

        if (total == 0)
        {
            return false;
        }

        var pick = (int)((_queuePick >> 8) % (uint)total);
        var start = 0;
        for (; start < members.Length - 1; start++)
        {
            var member = members[start];
            pick -= member.Client._route is null ? 1 : (toRoutes ? member.Weight : 0);
            if (pick < 0)
            {
                break;
            }
        }

        for (var i = 0; i < members.Length; i++)
        {
            var sub = members[(start + i) % members.Length];
            if (sub.Client._route is not null)
            {
                if (toRoutes)
                {
                    AddRouteTarget(sub.Client, group);
                    return false; // delivered once SendToRoutes has queued it
                }

                continue;
            }

            if (!_echo && ReferenceEquals(sub.Client, this))
            {
                continue;
            }

            if (Deliver(sub, ref templates, payload))
            {
                return true;
            }
        }

        return false;
    }

    private bool Deliver(Subscription sub, ref Templates templates, in ReadOnlySequence<byte> payload)
    {
        if (sub.Import is { } import)
        {
            return DeliverImport(sub, import, ref templates, payload);
        }

        if (sub.Client.DeliveryFilter is { } filter && filter.DeniesDelivery(templates.Subject))
        {
            return false;
        }

        var claim = sub.TryClaimDelivery();
        if (claim < 0)
        {
            return false;
        }

        var target = sub.Client;
        bool written;
        if (target._mqtt is not null)
        {
            written = target.WriteMqttDelivery(sub, templates.Subject, templates.HeaderSize, payload, _mqtt?.InboundQoS ?? 0, _mqtt?.InboundRetain == true);
        }
        else if (sub.Direct is { } direct)
        {
            written = DeliverDirect(target, direct, templates.Subject, templates.ReplyTo, templates.HeaderSize, payload);
        }
        else if (templates.HeaderSize > 0 && !target._headers)
        {
            // A subscriber that did not ask for headers gets a plain MSG without the header block, as nats-server.
            templates.FormatPlain();
            written = target.Outbound.WriteMsg(templates.PlainPrefix, sub.Sid, templates.PlainSuffix, payload.Slice(templates.HeaderSize));
        }
        else
        {
            written = target.Outbound.WriteMsg(templates.Prefix, sub.Sid, templates.Suffix, payload);
        }

        if (!written)
        {
            return false;
        }

        Delivered(target, sub, claim, templates.ReplyTo);
        return true;
    }

    /// <summary>A delivery to an in-process service's direct subscription: a call, completed with the target's outbound at the end of this batch.</summary>
    private static bool DeliverDirect(ClientConnection target, IDirectSubscriber direct, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        if (!direct.Deliver(subject, replyTo, headerSize, payload, out var first))
        {
            return false;
        }

        if (first)
        {
            target.Outbound.AddDirectPending(direct);
        }

        return true;
    }

    /// <summary>
    /// What follows a written delivery, directly or through an import: the reply tracked for
    /// allow_responses, the target marked for this batch's flush, an auto-unsubscribe's last message
    /// removing its subscription, and an MQTT publisher's acks held for a persistent session's journal.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Delivered(ClientConnection target, Subscription sub, int claim, ReadOnlySpan<byte> replyTo)
    {
        if (target._permissions is { TracksReplies: true } permissions && !replyTo.IsEmpty)
        {
            permissions.TrackReply(replyTo);
        }

        Touch(target.Outbound);
        if (claim > 0)
        {
            target.RemoveAfterLastDelivery(sub);
        }

        if (target._isMqttCapture && _mqtt is not null)
        {
            _mqtt.CaptureTouched = true; // a persistent session keeps it: PUBACK after its journal write
        }
    }

    // HMSG <reply> <sid> 16 16\r\nNATS/1.0 503\r\n\r\n\r\n to this client's own subscription on the reply subject.
    private void SendNoResponders(ReadOnlySpan<byte> replyTo)
    {
        var match = _account.Space.Match(replyTo);
        foreach (var sub in match.Plain)
        {
            if (!ReferenceEquals(sub.Client, this))
            {
                continue;
            }

            var header = ProtocolWriter.NoRespondersHeader;
            var template = MsgTemplate;
            if (ProtocolWriter.TryFormatMsgTemplate(template, replyTo, default, header.Length, header.Length, out var prefixLength, out var suffixLength))
            {
                Outbound.WriteMsg(
                    new ReadOnlySpan<byte>(template, 0, prefixLength),
                    sub.Sid,
                    new ReadOnlySpan<byte>(template, prefixLength, suffixLength),
                    new ReadOnlySequence<byte>(NoRespondersPayload));
                Touch(Outbound);
            }

            return;
        }
    }

    private static readonly byte[] NoRespondersPayload = ProtocolWriter.NoRespondersHeader.ToArray();

    /// <summary>Notes an outbound to signal at the end of this read batch, once per batch.</summary>
    /// <remarks>
    /// Batch ids are unique across the node, so an outbound marked with this batch's id was added by
    /// this batch. Another publisher overwriting the mark only causes a harmless duplicate signal.
    /// </remarks>
    private void Touch(Outbound outbound)
    {
        if (outbound.TouchedInBatch == _batchId)
        {
            return;
        }

        outbound.TouchedInBatch = _batchId;
        _touched.Add(outbound);
    }

    /// <summary>
    /// Deferred flush: wakes each touched client's write pump once for the whole read batch, and
    /// notes the ones so far behind that this producer should wait for them. Returns whether the
    /// batch was a client's small one (latency-bound: see <see cref="Hosting.IdlePoll"/>).
    /// </summary>
    private bool FlushTouched()
    {
        // A small batch is latency-bound (request/reply): write it from this thread. A large one is
        // throughput-bound: hand it to the pumps so another core writes while this one parses. An
        // in-process subscriber is completed from here (a call: the hand-over to its actor), so a pool
        // hop would be pure cost. And an in-process client's own batches (a stream's PubAcks, a
        // consumer's delivery pass) are written by the service's thread, which has nothing else to parse.
        var small = InMsgs - _inMsgsAtBatchStart <= InlineFlushMaxMessages;
        var inline = IsInternal || small;
        _inMsgsAtBatchStart = InMsgs;

        // A client's small batch also runs the services it fed (a memory stream's append and PubAck) on
        // this thread, as nats-server stores on the reading goroutine (Hosting/CallerRunsExecutor.cs).
        var readerTurn = small && !IsInternal;
        if (readerTurn)
        {
            CallerRunsExecutorConfigurator.CallerTurn = true;
        }

        try
        {
            foreach (var outbound in _touched)
            {
                outbound.Signal(inline || outbound.InProcess);
                if (_route is null && !IsInternal && outbound.IsStalling && !_stalledOn.Contains(outbound)) // routes and services are never stalled, as nats-server stalls only client producers
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
    private async Task WaitForStalledConsumersAsync()
    {
        foreach (var outbound in _stalledOn)
        {
            var drained = outbound.WaitForDrainAsync();
            if (!drained.IsCompleted)
            {
                // WaitAsync drops its timer when the drain comes first (a Task.Delay would stay queued).
                await drained.WaitAsync(outbound.StallDuration).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
        }

        _stalledOn.Clear();
    }

    private readonly List<Outbound> _stalledOn = [];

    /// <summary>Messages in a read batch up to which deliveries are written inline (see <see cref="FlushTouched"/>).</summary>
    private const int InlineFlushMaxMessages = 16;

    private long _inMsgsAtBatchStart;

    /// <summary>
    /// The MSG/HMSG control-line parts of one publish, and, formatted on first need, the plain MSG
    /// variant for subscribers without header support (the header block stripped, as nats-server).
    /// </summary>
    private ref struct Templates
    {
        private readonly byte[] _buffer;
        private readonly int _plainOffset;
        private readonly ReadOnlySpan<byte> _replyTo;
        private readonly int _size;
        private int _plainPrefixLength;
        private int _plainSuffixLength;

        public Templates(byte[] buffer, int prefixLength, int suffixLength, int plainOffset, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, int size)
        {
            _buffer = buffer;
            Prefix = new ReadOnlySpan<byte>(buffer, 0, prefixLength);
            Suffix = new ReadOnlySpan<byte>(buffer, prefixLength, suffixLength);
            _plainOffset = plainOffset;
            Subject = subject;
            _replyTo = replyTo;
            HeaderSize = headerSize;
            _size = size;
            _plainPrefixLength = -1;
        }

        public ReadOnlySpan<byte> Subject { get; }

        public readonly ReadOnlySpan<byte> ReplyTo => _replyTo;

        /// <summary>The header block size, -1 without headers.</summary>
        public int HeaderSize { get; }

        public ReadOnlySpan<byte> Prefix { get; }

        public ReadOnlySpan<byte> Suffix { get; }

        public readonly ReadOnlySpan<byte> PlainPrefix => new(_buffer, _plainOffset, _plainPrefixLength);

        public readonly ReadOnlySpan<byte> PlainSuffix => new(_buffer, _plainOffset + _plainPrefixLength, _plainSuffixLength);

        public void FormatPlain()
        {
            if (_plainPrefixLength >= 0)
            {
                return;
            }

            ProtocolWriter.TryFormatMsgTemplate(_buffer.AsSpan(_plainOffset), Subject, _replyTo, -1, _size - HeaderSize, out _plainPrefixLength, out _plainSuffixLength);
        }
    }
}
