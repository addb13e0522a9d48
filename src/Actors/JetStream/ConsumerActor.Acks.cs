using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// Acks and what follows from them: ack waits, pending deliveries, the ack floor, max_deliver, and
/// interest retention reports to the stream's ledger.
/// </summary>
internal sealed partial class ConsumerActor
{
    private long AckWaitFor(long deliveries) => AckWaitFor(_config, deliveries);

    /// <summary>How long (ns) <paramref name="config"/> waits for the ack of a message's delivery number <paramref name="deliveries"/>.</summary>
    private static long AckWaitFor(ConsumerConfig config, long deliveries)
    {
        if (config.Backoff is { Count: > 0 } backoff)
        {
            return backoff[(int)Math.Min(deliveries - 1, backoff.Count - 1)];
        }

        return config.AckWait;
    }

    // Acks decoded by the stream's AckSink from $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<...> and the body.
    private void OnAcks(ArraySegment<AckEntry> acks)
    {
        _lastActivity = DateTime.UtcNow;
        List<string>? confirmations = null;
        foreach (var ack in acks)
        {
            var seq = ack.StreamSeq;
            switch (ack.Kind)
            {
                case AckKind.Ack:
                    SampleAck(seq);
                    Acknowledge(seq);
                    break;
                case AckKind.Nak:
                    if (_pending.TryGetValue(seq, out var nakked))
                    {
                        DeliveryAdvisory("MSG_NAKED", "io.nats.jetstream.advisory.v1.nak", seq, nakked);
                        if (ack.DelayNanos > 0)
                        {
                            SetPending(seq, nakked with { DeadlineTicks = DateTime.UtcNow.AddTicks(ack.DelayNanos / 100).Ticks });
                        }
                        else
                        {
                            _redeliver.Add(seq);
                        }
                    }

                    break;
                case AckKind.Progress:
                    if (_pending.TryGetValue(seq, out var working))
                    {
                        SetPending(seq, working with { DeadlineTicks = DateTime.UtcNow.AddTicks(_config.AckWait / 100).Ticks });
                    }

                    break;
                case AckKind.Term:
                    if (_pending.TryGetValue(seq, out var terminated))
                    {
                        DeliveryAdvisory("MSG_TERMINATED", "io.nats.jetstream.advisory.v1.terminated", seq, terminated);
                    }

                    Acknowledge(seq); // as nats-server: no redelivery, and retention counts it as acknowledged
                    break;
                case AckKind.Next:
                    SampleAck(seq);
                    Acknowledge(seq);
                    if (ack.Reply is { } reply)
                    {
                        // No priority group (as a pull request without a JSON body): the last priority, never pinned.
                        Enqueue(new Waiting(reply, 1, false, DateTime.MaxValue, TimeSpan.Zero) { LastActivity = DateTime.UtcNow, Priority = int.MaxValue });
                        TickRegularly();
                    }

                    continue; // the reply is the next message, not an empty acknowledgement
            }

            if (ack.Reply is { } ackReply)
            {
                confirmations ??= [];
                confirmations.Add(ackReply);
            }
        }

        AdvanceAckFloor();
        ReportInterest();

        // Double-ack confirmations go out only once the acks' event is stored (it survives kill -9).
        _positionsChanged = true;
        Checkpoint(confirmations);
        Deliver();
    }

    /// <summary>
    /// sample_freq: an explicit ack of a pending delivery is published as nats-server's consumer_ack metric when the
    /// sample picks it (every one at 100%, else as nats-server: a draw of 0-99 at most the percentage).
    /// </summary>
    private void SampleAck(ulong seq)
    {
        if (_samplePercent <= 0 || _config.AckPolicy != AckPolicy.Explicit || !_pending.TryGetValue(seq, out var pending)
            || (_samplePercent < 100 && Random.Shared.Next(100) > _samplePercent))
        {
            return;
        }

        // Delivered (or last told of progress) one ack wait before its deadline: nats-server's pending timestamp.
        var now = DateTime.UtcNow;
        var since = pending.DeadlineTicks is 0 or long.MaxValue ? 0 : now.Ticks - (pending.DeadlineTicks - (AckWaitFor(pending.Deliveries) / 100));
        var metric = new ConsumerAckMetric
        {
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = now,
            Stream = _stream,
            Consumer = _name,
            ConsumerSeq = pending.ConsumerSeq,
            StreamSeq = seq,
            AckTime = Math.Max(since, 0) * 100,
            Deliveries = pending.Deliveries,
            Domain = _context.Domain,
        };
        _advisories.Publish($"$JS.EVENT.METRIC.CONSUMER.ACK.{_stream}.{_name}", null, default, System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(metric, ConsumerJsonContext.Default.ConsumerAckMetric));
    }

    /// <summary>nats-server's nak and terminated advisories, on <c>$JS.EVENT.ADVISORY.CONSUMER.&lt;kind&gt;.&lt;stream&gt;.&lt;consumer&gt;</c>, for a pending delivery.</summary>
    private void DeliveryAdvisory(string kind, string type, ulong seq, Pending pending)
    {
        var advisory = new DeliveryAdvisory
        {
            Type = type,
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = DateTime.UtcNow,
            Stream = _stream,
            Consumer = _name,
            ConsumerSeq = pending.ConsumerSeq,
            StreamSeq = seq,
            Deliveries = pending.Deliveries,
            Domain = _context.Domain,
        };
        _advisories.Publish($"$JS.EVENT.ADVISORY.CONSUMER.{kind}.{_stream}.{_name}", null, default, System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.DeliveryAdvisory));
    }

    private void SetPending(ulong seq, Pending pending)
    {
        _pending[seq] = pending;
        if (pending.DeadlineTicks != 0 && pending.DeadlineTicks < _nextDeadlineTicks)
        {
            _nextDeadlineTicks = pending.DeadlineTicks;
        }
    }

    private void Acknowledge(ulong seq)
    {
        if (_config.AckPolicy != AckPolicy.All)
        {
            Acknowledged(seq);
            return;
        }

        // _pending is in sequence order: the acknowledged ones are its head.
        foreach (var s in _pending.KeysUpTo(seq))
        {
            Acknowledged(s);
        }
    }

    private void Acknowledged(ulong seq)
    {
        if (!_pending.Remove(seq))
        {
            return;
        }

        _redeliver.Remove(seq);
        if (_persistenceId is not null)
        {
            _delta.Removed.Add(seq);
        }

        if (_context.WorkQueue)
        {
            // Work-queue retention: a message is gone once its consumer has acknowledged it.
            _store.RemoveMessage(seq);
        }
        else if (_context.Interest is not null)
        {
            _released.Add(seq);
        }
    }

    /// <summary>
    /// A message delivered max_deliver times is not delivered again (a NAK or an expired ack wait
    /// brought it here): nats-server publishes its max_deliver advisory and drops it from pending, so
    /// the ack floor moves on. On an interest or work-queue stream that would release the message
    /// from the stream, which nats-server does not do: there it stays pending, never redelivered.
    /// </summary>
    private void DeliveriesExhausted(ulong seq, Pending pending)
    {
        if (pending.DeadlineTicks == long.MaxValue)
        {
            return; // already reported
        }

        var advisory = new MaxDeliveriesAdvisory
        {
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = DateTime.UtcNow,
            Stream = _stream,
            Consumer = _name,
            StreamSeq = seq,
            Deliveries = pending.Deliveries,
        };
        _advisories.Publish($"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{_stream}.{_name}", null, default, System.Text.Json.JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.MaxDeliveriesAdvisory));
        if (_context.Interest is null)
        {
            _pending.Remove(seq);
            if (_persistenceId is not null)
            {
                _delta.Removed.Add(seq);
            }
        }
        else
        {
            _pending[seq] = pending with { DeadlineTicks = long.MaxValue };
        }
    }

    /// <summary>
    /// Interest retention: tells the stream's ledger what this consumer acknowledged and where its
    /// ack floor is now; messages no other consumer needs go. Once per ack batch or delivery pass.
    /// </summary>
    private void ReportInterest()
    {
        if (_context.Interest is { } interest)
        {
            interest.Release(_released, _ackFloorStream);
            _released.Clear();
        }
    }

    private void AdvanceAckFloor()
    {
        if (_config.AckPolicy == AckPolicy.None)
        {
            _ackFloorStream = _deliveredStream;
            _ackFloorConsumer = _deliveredConsumer;
            return;
        }

        if (!_pending.TryGetFirst(out var firstSeq, out var first))
        {
            _ackFloorStream = _deliveredStream;
            _ackFloorConsumer = _deliveredConsumer;
            return;
        }

        _ackFloorStream = firstSeq - 1;
        _ackFloorConsumer = first.ConsumerSeq - 1;
    }
}
