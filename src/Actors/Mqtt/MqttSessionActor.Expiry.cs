using System.Diagnostics;
using Akka.Actor;
using Courier.Actors.Connections;

namespace Courier.Actors.Mqtt;

/// <summary>
/// MQTT 5.0 Session Expiry Interval and Will Delay Interval: a kept session whose connection ended
/// ends itself that many seconds later unless a CONNECT attaches to it first [MQTT-3.1.2-23]; a will
/// with a delay is published when the delay passes or the session ends, whichever comes first, and
/// never if the client connects again before [MQTT-3.1.3-9]. The interval is journaled, so a restart
/// keeps it (counted again from the restart, when no connection is there).
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
        });
        Command<WillDue>(due =>
        {
            if (due.Attaches != _attaches || _pendingWill is null)
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

    private void ArmExpiry() =>
        Timers.StartSingleTimer(ExpiryTimer, new ExpiryDue(_attaches), Remaining(_expiresAt));

    private void ArmWill() =>
        Timers.StartSingleTimer(WillTimer, new WillDue(_attaches), Remaining(_willAt));

    private static TimeSpan Remaining(long at)
    {
        var left = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), at);
        return left <= TimeSpan.Zero ? TimeSpan.Zero : left < LongestTimer ? left : LongestTimer;
    }

    // A CONNECT attached: the session stays, and a will waiting for its delay is dropped.
    private void CancelExpiryAndWill()
    {
        _expiresAt = 0;
        _pendingWill = null;
        Timers.Cancel(ExpiryTimer);
        Timers.Cancel(WillTimer);
    }

    private void PublishPendingWill()
    {
        if (_pendingWill is { } client)
        {
            _pendingWill = null;
            Timers.Cancel(WillTimer);
            client.PublishDelayedWill();
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
