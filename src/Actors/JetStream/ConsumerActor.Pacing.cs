using Courier.Protocols.JetStream;
using Courier.Storage;

namespace Courier.Actors.JetStream;

/// <summary>
/// Paced delivery, as nats-server's loopAndGatherMsgs: <c>replay_policy: original</c> sends the messages the
/// stream held when the consumer started with the gaps between their stored times (then live messages at
/// once), and <c>rate_limit_bps</c> holds a push consumer to that many bits a second (a token bucket with a
/// burst of one maximum payload, as nats-server's rate.Limiter). A message whose time has not come is held
/// where it is (the next pass finds it again) and a timer wakes the consumer when it is due.
/// </summary>
internal sealed partial class ConsumerActor
{
    private const string PaceTimer = "pace";

    /// <summary>The rate limiter's burst: nats-server's default max_payload (its burst is the maximum message size).</summary>
    private const double RateBurstBytes = 1024 * 1024;

    private bool _replaying;        // replay_policy original, until delivery passes what the stream held at the start
    private ulong _replayThrough;   // the stream's last sequence when delivery started
    private long _lastSentTimestamp; // stored time (Unix ns) of the last message sent, for the replay gaps
    private ulong _heldSequence;    // the message a pace delay holds, and when it is due
    private DateTime _heldUntil;
    private double _rateTokens = RateBurstBytes;
    private DateTime _rateTokensAt = DateTime.UtcNow;

    /// <summary>Delivery starts (or starts again): replay original replays what the stream holds now.</summary>
    private void StartPacing()
    {
        _replaying = _config.ReplayPolicy == ReplayPolicy.Original;
        _replayThrough = _replaying ? _store.State().LastSeq : 0;
        _lastSentTimestamp = 0;
        _heldSequence = 0;
    }

    /// <summary>
    /// True when <paramref name="message"/> must wait (a timer is set for it); false when it may go now. The rate
    /// limit's bytes are taken once per message, when its delay is first worked out.
    /// </summary>
    private bool Held(StoredMessage message)
    {
        if (!_replaying && _config.RateLimit == 0)
        {
            return false;
        }

        if (_heldSequence == message.Sequence && _heldSequence != 0)
        {
            if (_passNow >= _heldUntil)
            {
                _heldSequence = 0;
                return false;
            }

            Timers.StartSingleTimer(PaceTimer, Protocol.NewMessages.Instance, _heldUntil - _passNow);
            return true;
        }

        var delay = TimeSpan.Zero;
        if (_replaying && _lastSentTimestamp > 0)
        {
            var gap = TimeSpan.FromTicks((message.Timestamp - _lastSentTimestamp) / 100);
            if (gap > TimeSpan.FromMilliseconds(1))
            {
                delay = gap;
            }
        }

        if (_config.RateLimit > 0)
        {
            // What nats-server counts: subject, ack reply, headers, payload (the ack reply's length estimated).
            var size = message.Subject.Length + _ackPrefix.Length + 40 + message.Headers.Length + (_config.HeadersOnly ? 0 : message.Payload.Length);
            var rate = (double)(_config.RateLimit / 8); // bytes a second, as nats-server's rate.Limit(bps / 8)
            var burst = Math.Max(RateBurstBytes, size);
            _rateTokens = Math.Min(burst, _rateTokens + ((_passNow - _rateTokensAt).TotalSeconds * rate));
            _rateTokensAt = _passNow;
            _rateTokens -= size;
            if (_rateTokens < 0 && rate > 0)
            {
                var wait = TimeSpan.FromSeconds(-_rateTokens / rate);
                delay = wait > delay ? wait : delay;
            }
        }

        if (delay <= TimeSpan.Zero)
        {
            return false;
        }

        _heldSequence = message.Sequence;
        _heldUntil = _passNow + delay;
        Timers.StartSingleTimer(PaceTimer, Protocol.NewMessages.Instance, delay);
        return true;
    }

    /// <summary>After a send: the gap to the next message counts from this one's stored time.</summary>
    private void Sent(StoredMessage message) => _lastSentTimestamp = message.Timestamp;

    /// <summary>At the end of a pass: a replay that passed the stream's last message at the start is over.</summary>
    private void EndReplayWhenCaughtUp()
    {
        if (_replaying && _nextSeq > _replayThrough)
        {
            _replaying = false;
        }
    }
}
