using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>CONSUMER.RESET (nats-server 2.14): the consumer starts again from a sequence.</summary>
internal sealed partial class ConsumerActor
{
    /// <summary>
    /// CONSUMER.RESET (nats-server 2.14's resetLocalStartingSeq): the next delivery is <paramref name="sequence"/> (0:
    /// the one after the ack floor), with consumer sequence 1; pending deliveries and redeliveries are forgotten
    /// and both ack floors sit just below. The stream checked the sequence against the deliver policy.
    /// </summary>
    private ConsumerInfoResponse ResetTo(ulong sequence)
    {
        var seq = Math.Max(sequence == 0 ? _ackFloorStream + 1 : sequence, 1);
        if (_persistenceId is not null)
        {
            _delta.Removed.AddRange(_pending.Keys());
        }

        _pending.Clear();
        _redeliver.Clear();
        _lastPerSubject.Clear();
        _displaced.Clear();
        _released.Clear();
        _nextDeadlineTicks = long.MaxValue;
        _nextSeq = seq;
        _deliveredStream = seq - 1;
        _deliveredConsumer = 0;
        _ackFloorStream = seq - 1;
        _ackFloorConsumer = 0;
        _positionsChanged = true;
        if (_context.Interest is { } interest)
        {
            // Interest retention: what a forward reset skips is acknowledged as far as this consumer goes (nats-server's
            // checkStateForInterestStream); after a reset back, what is still stored is needed again.
            interest.Release([], _ackFloorStream);
            interest.Begin(_ackFloorStream, _deliveredStream, _ => false);
        }

        Checkpoint(null);
        var info = Info("io.nats.jetstream.api.v1.consumer_reset_response");
        info.ResetSeq = seq;
        TickRegularly();
        Deliver();
        return info;
    }
}
