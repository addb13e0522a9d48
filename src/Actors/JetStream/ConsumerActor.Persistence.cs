namespace Courier.Actors.JetStream;

/// <summary>
/// The journal of a durable consumer: recovery from its snapshot and events, one checkpoint event per
/// ack batch or tick, snapshots every <see cref="SnapshotEvery"/> events, double-ack confirmations once stored.
/// </summary>
internal sealed partial class ConsumerActor
{
    /// <summary>Recovery is over (or there was none): continue from the recovered state and start delivering.</summary>
    private void Started()
    {
        if (_context.Seed is { } seed && (!_recovered || seed.AckFloorStream > _ackFloorStream))
        {
            // A replicated stream's new leader: the state its old leader replicated is newer than this node's
            // journal (or this node has none). Taken as if recovered, and saved as this journal's snapshot.
            ApplySnapshot(seed);
            if (_persistenceId is not null)
            {
                SaveSnapshot(TakeSnapshot());
            }
        }

        if (_recovered)
        {
            foreach (var seq in _pending.Keys())
            {
                // Delivered before the restart and never acknowledged: redeliver.
                _redeliver.Add(seq);
            }

            // A snapshot may be newer than the events replayed over it: never restart below a pending delivery.
            if (_pending.Count > 0)
            {
                _deliveredStream = Math.Max(_deliveredStream, _pending.MaxKey());
                _deliveredConsumer = Math.Max(_deliveredConsumer, _pending.Values.Max(p => p.ConsumerSeq));
            }

            _nextSeq = _deliveredStream + 1;
            AdvanceAckFloor();
        }

        StartFlowControl();
        StartPacing();
        _context.Interest?.Begin(_ackFloorStream, _deliveredStream, _pending.ContainsKey);
        if (!_recovered)
        {
            // A new durable stores where it starts (its deliver policy is evaluated once, now).
            _positionsChanged = true;
            Checkpoint(null);

            // A push consumer delivers at once (below), before its create reply goes out. The reply
            // shows the state before that, as nats-server's does: clients read num_pending in it as
            // "messages to come" (NATS.Net's KV GetKeysAsync lists nothing when it is 0).
            _initialInfo = Info("io.nats.jetstream.api.v1.consumer_info_response");
        }

        if (_config.PauseUntil is not null)
        {
            OnPauseChanged(announce: IsPaused(DateTime.UtcNow));
        }

        Deliver();
    }

    private void ApplySnapshot(ConsumerSnapshot snapshot)
    {
        Reset();
        _deliveredStream = snapshot.DeliveredStream;
        _deliveredConsumer = snapshot.DeliveredConsumer;
        _ackFloorStream = snapshot.AckFloorStream;
        _ackFloorConsumer = snapshot.AckFloorConsumer;
        foreach (var p in snapshot.Pending)
        {
            _pending[p.StreamSeq] = new Pending(p.ConsumerSeq, p.Deliveries, 0);
        }
    }

    private void ApplyDelta(ConsumerDelta delta)
    {
        if (!_recovered)
        {
            Reset();
        }

        _deliveredStream = delta.DeliveredStream;
        _deliveredConsumer = delta.DeliveredConsumer;
        _ackFloorStream = delta.AckFloorStream;
        _ackFloorConsumer = delta.AckFloorConsumer;
        foreach (var p in delta.Delivered)
        {
            _pending[p.StreamSeq] = new Pending(p.ConsumerSeq, p.Deliveries, 0);
        }

        foreach (var seq in delta.Removed)
        {
            _pending.Remove(seq);
        }

        _eventsSinceSnapshot++;
    }

    // The first recovered snapshot or event replaces the state the constructor set up for a new consumer.
    private void Reset()
    {
        _recovered = true;
        _lastPerSubject.Clear();
        _pending.Clear();
        _eventsSinceSnapshot = 0;
    }

    /// <summary>
    /// Persists what changed since the last checkpoint as one event; <paramref name="confirmations"/>
    /// (double-ack replies) go out once it is stored. Consumers without a journal confirm at once.
    /// </summary>
    private void Checkpoint(List<string>? confirmations)
    {
        if (_persistenceId is null || (_delta.IsEmpty && !_positionsChanged))
        {
            Confirm(confirmations);
            return;
        }

        var delta = _delta;
        _delta = new ConsumerDelta();
        _positionsChanged = false;
        delta.DeliveredStream = _deliveredStream;
        delta.DeliveredConsumer = _deliveredConsumer;
        delta.AckFloorStream = _ackFloorStream;
        delta.AckFloorConsumer = _ackFloorConsumer;
        PersistAsync(delta, _ =>
        {
            Confirm(confirmations);
            if (++_eventsSinceSnapshot >= SnapshotEvery)
            {
                _eventsSinceSnapshot = 0;
                SaveSnapshot(TakeSnapshot());
            }
        });
    }

    private void Confirm(List<string>? confirmations)
    {
        foreach (var reply in confirmations ?? [])
        {
            _out.Publish(reply, null, default, default);
        }
    }

    private ConsumerSnapshot TakeSnapshot()
    {
        var snapshot = new ConsumerSnapshot
        {
            DeliveredStream = _deliveredStream,
            DeliveredConsumer = _deliveredConsumer,
            AckFloorStream = _ackFloorStream,
            AckFloorConsumer = _ackFloorConsumer,
        };
        foreach (var (seq, p) in _pending)
        {
            snapshot.Pending.Add(new PendingRecord(seq, p.ConsumerSeq, p.Deliveries));
        }

        return snapshot;
    }
}
