using System.Diagnostics;
using Akka.Actor;
using Courier.Actors.Connections;

namespace Courier.Actors.Mqtt;

/// <summary>
/// MQTT 5.0 Session Expiry Interval and Will Delay Interval: a kept session whose connection ended
/// ends itself that many seconds later unless a CONNECT attaches to it first [MQTT-3.1.2-23]; a will
/// with a delay is published when the delay passes or the session ends, whichever comes first, and
/// never if the client connects again before [MQTT-3.1.3-9]. The interval is journaled, so a restart
/// keeps it (counted again from the restart, when no connection is there). A will waiting for its delay
/// is journaled too, with when it is due (wall clock, counted from the disconnect): after a restart it is
/// published then, or at the session's end if sooner, through <see cref="MqttWillPublisher"/>.
/// </summary>
internal sealed partial class MqttSessionActor
{
    private const string ExpiryTimer = "expiry";
    private const string WillTimer = "will";

    // The scheduler's longest single delay is far below 0xFFFFFFFE s (136 years): a longer wait re-arms.
    private static readonly TimeSpan LongestTimer = TimeSpan.FromDays(20);

    private uint _expiry = uint.MaxValue; // seconds the session outlives its connection; MaxValue: never ends
    private long _expiresAt; // Stopwatch timestamp: when the offline session ends (0: no expiry running)
    private MqttConnection? _pendingWill; // a closed connection whose will waits for its delay
    private MqttJournaledWill? _journaledWill; // that will as journaled; after a restart, the only copy
    private long _willAt; // Stopwatch timestamp: when that will is published

    /// <inheritdoc />
    public ITimerScheduler Timers { get; set; } = null!;

    private void ReceiveExpiryAndWill()
    {
        Command<Protocol.Expiry>(expiry =>
        {
            if (_clean || expiry.Seconds == _expiry || (_connection is not null && !_connection.Equals(expiry.Connection)))
            {
                return;
            }

            // Persist (not PersistAsync): the connection's Terminated waits until the interval it set is in force.
            var generation = _generation;
            Persist(new MqttSessionEvent(MqttSessionEventKind.Expiry) { ExpiryInterval = expiry.Seconds }, e =>
            {
                if (generation == _generation)
                {
                    Apply(e);
                    Checkpoint();
                }
            });
        });
        Command<Protocol.DelayedWill>(will =>
        {
            if (_connection is not null && !_connection.Equals(will.Connection))
            {
                return; // a new connection came before the delay passed: never sent [MQTT-3.1.3-9]
            }

            if (_clean || _ended)
            {
                will.Client.PublishDelayedWill(); // the session is over already
                return;
            }

            _pendingWill = will.Client;
            _willAt = Stopwatch.GetTimestamp() + (long)(will.Delay * (double)Stopwatch.Frequency);
            ArmWill();

            // Journaled, so that a restart before the delay runs out does not lose it. The will state is set
            // here, not in the write's callback: a callback applied after the will went out would bring it back.
            if (will.Client.DelayedWillRecord(DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() + (will.Delay * 1000L)) is { } record)
            {
                _journaledWill = record;
                PersistAsync(new MqttSessionEvent(MqttSessionEventKind.Will) { Will = record }, _ => Checkpoint());
            }
        });
        Command<WillDue>(due =>
        {
            if (due.Attaches != _attaches || (_pendingWill is null && _journaledWill is null))
            {
                return;
            }

            if (Stopwatch.GetTimestamp() < _willAt)
            {
                ArmWill(); // a delay longer than one timer
                return;
            }

            PublishPendingWill();
        });
        Command<ExpiryDue>(due =>
        {
            if (due.Attaches != _attaches || _connection is not null || _clean || _expiresAt == 0)
            {
                return;
            }

            if (Stopwatch.GetTimestamp() < _expiresAt)
            {
                ArmExpiry();
                return;
            }

            EndNow(); // publishes a will still waiting, then forgets the session [MQTT-3.1.2-23]
            BecomeIdle(); // the actor and its index entry go too, once the journal is deleted
        });
    }

    // The connection ended (or none came back after a restart): the session ends after its interval.
    private void StartExpiry()
    {
        if (_expiry == uint.MaxValue || _ended)
        {
            return;
        }

        _expiresAt = Stopwatch.GetTimestamp() + (long)(_expiry * (double)Stopwatch.Frequency);
        ArmExpiry();
    }

    // After a restart: a journaled will waits for what is left of its delay, counted from the disconnect.
    private void ResumeWill()
    {
        if (_journaledWill is not { } will)
        {
            return;
        }

        var left = Math.Max(0, will.DueAt - DateTimeOffset.UtcNow.ToUnixTimeMilliseconds());
        _willAt = Stopwatch.GetTimestamp() + (long)(left / 1000.0 * Stopwatch.Frequency);
        ArmWill();
    }

    private void ArmExpiry() =>
        Timers.StartSingleTimer(ExpiryTimer, new ExpiryDue(_attaches), Remaining(_expiresAt));

    private void ArmWill() =>
        Timers.StartSingleTimer(WillTimer, new WillDue(_attaches), Remaining(_willAt));

    private static TimeSpan Remaining(long at)
    {
        var left = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), at);
        return left <= TimeSpan.Zero ? TimeSpan.Zero : left < LongestTimer ? left : LongestTimer;
    }

    // A CONNECT attached: the session stays, and a will waiting for its delay is dropped. Returns whether a
    // journaled one was: the caller journals that it is gone unless the session's journal is deleted in this turn.
    private bool CancelExpiryAndWill()
    {
        _expiresAt = 0;
        _pendingWill = null;
        Timers.Cancel(ExpiryTimer);
        Timers.Cancel(WillTimer);
        var journaled = _journaledWill is not null;
        ForgetJournaledWill(journal: false);
        return journaled;
    }

    // The will's delay passed or its session ended: published by the connection that set it, or after a restart
    // (no connection left) from the journal, once. At the session's end (`ending`) nothing is journaled: the
    // journal is deleted next, and a write issued in the same turn would land after that deletion.
    private void PublishPendingWill(bool ending = false)
    {
        if (_pendingWill is { } client)
        {
            _pendingWill = null;
            client.PublishDelayedWill();
        }
        else if (_journaledWill is { } will)
        {
            _willPublisher.Publish(will);
        }
        else
        {
            return;
        }

        Timers.Cancel(WillTimer);
        ForgetJournaledWill(journal: !ending);
    }

    // The journaled will was published or dropped: journaled, so a restart does not publish it again.
    private void ForgetJournaledWill(bool journal = true)
    {
        if (_journaledWill is null)
        {
            return;
        }

        _journaledWill = null;
        if (journal && !_clean)
        {
            PersistAsync(new MqttSessionEvent(MqttSessionEventKind.Will), _ => Checkpoint());
        }
    }

    // Timer ticks, tagged with the attach count they were armed under (a later CONNECT makes them stale).
    private sealed record ExpiryDue(int Attaches);

    private sealed record WillDue(int Attaches);

    public static partial class Protocol
    {
        /// <summary>
        /// MQTT 5.0: the Session Expiry Interval <paramref name="Connection"/> set at CONNECT or DISCONNECT,
        /// seconds (<see cref="uint.MaxValue"/>: never ends, as 3.1.1's kept sessions). Journaled.
        /// </summary>
        public sealed record Expiry(IActorRef Connection, uint Seconds);

        /// <summary>
        /// MQTT 5.0: <paramref name="Connection"/> ended with a will that has a Will Delay Interval of
        /// <paramref name="Delay"/> seconds: published by <paramref name="Client"/> after it, or at the session's end.
        /// </summary>
        public sealed record DelayedWill(IActorRef Connection, MqttConnection Client, uint Delay);
    }
}
