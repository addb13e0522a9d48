using System.Globalization;
using Courier.Protocols.JetStream;
using Courier.Protocols.Subjects;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Delivery: where a consumer starts, the next message for it (last-per-subject, the stream, displaced
/// messages), and sending it to the deliver subject or a waiting pull request, redeliveries first.
/// </summary>
internal sealed partial class ConsumerActor
{
    private ulong StartSequence()
    {
        var state = _store.State();
        return _config.DeliverPolicy switch
        {
            DeliverPolicy.Last => Math.Max(LastFilteredSequence(state.LastSeq), 1),
            DeliverPolicy.New => state.LastSeq + 1,
            DeliverPolicy.ByStartSequence => Math.Max(_config.OptStartSeq, 1),
            DeliverPolicy.ByStartTime when _config.OptStartTime is { } time =>
                Math.Max(_store.GetSequenceFromTime((time.ToUniversalTime() - DateTime.UnixEpoch).Ticks * 100), 1),
            _ => Math.Max(state.FirstSeq, 1),
        };
    }

    /// <summary>deliver_policy last: the stream's last message, or with filters the last one they match (nats-server's FilteredState.Last).</summary>
    private ulong LastFilteredSequence(ulong streamLast)
    {
        var filters = ConsumerConfigRules.Filters(_config);
        if (filters.Count == 0)
        {
            return streamLast;
        }

        ulong last = 0;
        foreach (var filter in filters)
        {
            last = Math.Max(last, _store.FilteredState(1, filter).Last);
        }

        return last;
    }

    /// <summary>Delivers redeliveries first, then new messages, while someone waits and the ack window allows.</summary>
    private void Deliver()
    {
        _passPending = -1;
        _passNow = DateTime.UtcNow;
        _deliveryPass++;
        var maxAckPending = _config.MaxAckPending > 0 ? _config.MaxAckPending : long.MaxValue;
        var atAckLimit = false;
        var held = false;

        // A push consumer delivers only while someone subscribes to its deliver subject, as nats-server:
        // messages wait in the stream meanwhile (the tick looks again).
        var pushReady = IsPush && _context.HasInterest(_config.DeliverSubject!);
        var paused = IsPaused(_passNow); // nothing goes out while paused, redeliveries included (nats-server's loopAndGatherMsgs)
        while (!paused && (IsPush ? pushReady && !FlowControlStalled : _waiting.Count > 0))
        {
            if (_config.AckPolicy != AckPolicy.None && _pending.Count >= maxAckPending && _redeliver.Count == 0)
            {
                atAckLimit = true;
                break;
            }

            StoredMessage? message = null;
            var redelivery = false;
            while (_redeliver.Count > 0 && message is null)
            {
                var seq = _redeliver.Min;
                _redeliver.Remove(seq);
                if (_config.MaxDeliver > 0 && _pending.TryGetValue(seq, out var exhausted) && exhausted.Deliveries >= _config.MaxDeliver)
                {
                    DeliveriesExhausted(seq, exhausted);
                    continue;
                }

                if (_pending.ContainsKey(seq) && _store.LoadMessage(seq) is { Found: true, Message: { } m })
                {
                    message = m;
                    redelivery = true;
                }
                else if (_pending.Remove(seq) && _persistenceId is not null)
                {
                    _delta.Removed.Add(seq); // gone from the stream meanwhile
                }
            }

            if (message is null && _config.AckPolicy != AckPolicy.None && _pending.Count >= maxAckPending)
            {
                atAckLimit = true;
                break;
            }

            var lastPerSubject = false;
            message ??= LoadNext(out lastPerSubject);
            if (message is null)
            {
                break;
            }

            held = Held(message);
            if (held || !Send(message, redelivery, lastPerSubject))
            {
                // Not due yet (paced), or no pull request could take it (max_bytes ended them): it goes first next time.
                if (redelivery)
                {
                    _redeliver.Add(message.Sequence);
                }
                else if (!lastPerSubject)
                {
                    _nextSeq = message.Sequence;
                }

                break;
            }

            Sent(message);
        }

        EndReplayWhenCaughtUp();
        if (!IsPush && !atAckLimit && !paused && !held)
        {
            EndNoWaitRequests();
        }

        AdvanceAckFloor();
        ReportInterest();
        _context.Feed?.Publish(_nextSeq, !paused && (IsPush ? pushReady : _waiting.Count > 0));
    }

    /// <summary>
    /// The next message for this consumer: the last-per-subject list first (left in place until
    /// it is sent: <paramref name="lastPerSubject"/>), then the stream from <c>_nextSeq</c> on, with
    /// the messages a later append removed before this consumer read them put back in their place.
    /// </summary>
    private StoredMessage? LoadNext(out bool lastPerSubject)
    {
        lastPerSubject = false;
        while (_lastPerSubject.TryPeek(out var seq))
        {
            if (_store.LoadMessage(seq) is { Found: true, Message: { } last })
            {
                lastPerSubject = true;
                return last;
            }

            _lastPerSubject.Dequeue();
        }

        var filters = _config.FilterSubjects is { Count: > 0 } many ? many : _config.FilterSubject is { Length: > 0 } one ? [one] : null;
        while (true)
        {
            // The store first, then the hand-over: a message removed after the read is still in the read.
            var result = _store.LoadNextMessage(filters is { Count: 1 } ? filters[0] : null, _nextSeq);
            var found = result.Found ? result.Message : null;
            if (TakeDisplaced(found?.Sequence ?? ulong.MaxValue, filters) is { } displaced)
            {
                _nextSeq = displaced.Sequence + 1;
                return displaced;
            }

            if (found is not { } m)
            {
                return null;
            }

            _nextSeq = m.Sequence + 1;
            if (filters is null || filters.Count == 1 || filters.Any(f => SubjectRules.Matches(m.Subject, f)))
            {
                return m;
            }
        }
    }

    /// <summary>
    /// The first message handed over by the stream as it was removed (<see cref="DisplacedMessages"/>)
    /// that this consumer has not passed and its filters match, if it comes before <paramref name="before"/>.
    /// It stays listed until <c>_nextSeq</c> passes it, so a send that fails finds it again.
    /// </summary>
    private StoredMessage? TakeDisplaced(ulong before, List<string>? filters)
    {
        if (_context.Feed is not { } feed || (feed.IsEmpty && _displaced.Count == 0))
        {
            return null;
        }

        while (feed.TryTake(out var message))
        {
            if (message.Sequence >= _nextSeq && (filters is null || filters.Any(f => SubjectRules.Matches(message.Subject, f))))
            {
                _displaced[message.Sequence] = message;
            }
        }

        while (_displaced.Count > 0 && _displaced.Keys[0] < _nextSeq)
        {
            _displaced.RemoveAt(0);
        }

        return _displaced.Count > 0 && _displaced.Keys[0] < before ? _displaced.Values[0] : null;
    }

    /// <summary>
    /// Sends one message to the deliver subject (push) or the first pull request that can take it.
    /// False, with nothing changed, when no pull request can.
    /// </summary>
    private bool Send(StoredMessage message, bool redelivery, bool lastPerSubject)
    {
        var deliveries = redelivery ? _pending[message.Sequence].Deliveries + 1 : 1;
        var consumerSeq = _deliveredConsumer + 1;

        // Counted once per Deliver pass (the store counts by scanning), then kept up to date here.
        var pendingCount = _passPending < 0 ? (long)NumPending() - (lastPerSubject ? 1 : 0)
            : !redelivery && _passPending > 0 ? _passPending - 1
            : _passPending;
        var ackReply = new AckReply(_ackPrefix, deliveries, message.Sequence, consumerSeq, message.Timestamp, pendingCount);
        var headers = _config.HeadersOnly
            ? Protocols.Nats.NatsHeaders.Set(message.Headers.Span, "Nats-Msg-Size", message.Payload.Length.ToString(CultureInfo.InvariantCulture))
            : message.Headers.Span;
        var payload = _config.HeadersOnly ? default : message.Payload.Span;

        string target;
        if (IsPush)
        {
            target = _config.DeliverSubject!;
            _lastPushActivity = _passNow;
        }
        else
        {
            // What a pull request's max_bytes counts, as nats-server: subject, ack reply, headers, payload.
            var size = message.Subject.Length + ackReply.Length + headers.Length + payload.Length;
            if (TakeWaiting(size, pendingCount) is not { } waiting)
            {
                return false;
            }

            target = waiting.Reply;
            if (_pinId is not null && GroupPolicy == PriorityPolicy.PinnedClient)
            {
                headers = WithPinHeader(headers); // after max_bytes counted the message, as nats-server adds it
            }
        }

        if (lastPerSubject)
        {
            _lastPerSubject.Dequeue();
        }

        _deliveredConsumer = consumerSeq;
        _passPending = pendingCount;
        if (!redelivery)
        {
            _deliveredStream = message.Sequence;
        }

        if (_config.AckPolicy != AckPolicy.None)
        {
            SetPending(message.Sequence, new Pending(_deliveredConsumer, deliveries, _passNow.AddTicks(AckWaitFor(deliveries) / 100).Ticks));
            if (_persistenceId is not null)
            {
                _delta.Delivered.Add(new PendingRecord(message.Sequence, _deliveredConsumer, deliveries));
            }
        }

        _out.Deliver(target, message.Subject, ackReply, headers, payload);
        if (IsPush)
        {
            CountFlowControl(target.Length + ackReply.Length + headers.Length + payload.Length);
        }

        _positionsChanged = true;
        return true;
    }
}
