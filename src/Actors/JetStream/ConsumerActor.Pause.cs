using System.Text.Json;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// Pause and resume (nats-server 2.11's <c>pause_until</c>): while the configured time is ahead nothing is
/// delivered, neither new messages nor redeliveries, push or pull (pull requests wait, and expire, as
/// usual); heartbeats and ack deadlines go on. A timer resumes the consumer at that time, with the
/// resume advisory, as nats-server's updatePauseState.
/// </summary>
internal sealed partial class ConsumerActor
{
    private static readonly TimeSpan MaxResumeWait = TimeSpan.FromDays(1);

    /// <summary>Paused at <paramref name="now"/>: <c>pause_until</c> is set and still ahead.</summary>
    private bool IsPaused(DateTime now) => _config.PauseUntil is { } until && now < until;

    /// <summary>
    /// After a start (this node runs the consumer: a create, a restart, a new stream leader) or a changed
    /// <c>pause_until</c>: arms the resume timer while paused. <paramref name="announce"/>: publishes the pause
    /// advisory now (a change, or a consumer that starts paused, as nats-server sends it when it creates one
    /// or becomes its leader).
    /// </summary>
    private void OnPauseChanged(bool announce)
    {
        Timers.Cancel("resume");
        var now = DateTime.UtcNow;
        if (IsPaused(now))
        {
            // At most a day at a time (a pause may run for years; the timer looks again when it fires).
            var wait = _config.PauseUntil!.Value - now;
            Timers.StartSingleTimer("resume", Protocol.Resume.Instance, wait < MaxResumeWait ? wait : MaxResumeWait);
        }

        if (announce)
        {
            SendPauseAdvisory(now);
        }
    }

    /// <summary>The resume timer fired: the pause is over (unless it was moved meanwhile, which re-armed the timer).</summary>
    private void OnResume()
    {
        var now = DateTime.UtcNow;
        if (IsPaused(now))
        {
            OnPauseChanged(announce: false); // a long pause's daily look, or a little early: wait for the rest
            return;
        }

        SendPauseAdvisory(now);
        Deliver();
    }

    // $JS.EVENT.ADVISORY.CONSUMER.PAUSE.<stream>.<consumer>: io.nats.jetstream.advisory.v1.consumer_pause
    private void SendPauseAdvisory(DateTime now)
    {
        var advisory = new ConsumerPauseAdvisory
        {
            Id = Guid.NewGuid().ToString("N"),
            Timestamp = now,
            Stream = _stream,
            Consumer = _name,
            Domain = _context.Domain,
        };
        if (_config.PauseUntil is { } until)
        {
            advisory.PauseUntil = until;
            advisory.Paused = now < until;
        }

        _advisories.Publish($"$JS.EVENT.ADVISORY.CONSUMER.PAUSE.{_stream}.{_name}", null, default, JsonSerializer.SerializeToUtf8Bytes(advisory, ConsumerJsonContext.Default.ConsumerPauseAdvisory));
    }

    /// <summary>CONSUMER.INFO's <c>paused</c> and <c>pause_remaining</c> (nanoseconds).</summary>
    private void FillPause(ConsumerInfoResponse info, DateTime now)
    {
        if (_config.PauseUntil is { } until && now < until)
        {
            info.Paused = true;
            info.PauseRemaining = (until - now).Ticks * 100;
        }
    }
}
