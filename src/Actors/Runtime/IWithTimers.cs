namespace Courier.Actors.Runtime;

/// <summary>
/// An actor that uses timers (Akka.NET <c>IWithTimers</c>). The runtime sets <see cref="Timers"/> right after
/// the constructor returns, so use it from <c>PreStart</c> or a handler, not in the constructor.
/// </summary>
public interface IWithTimers
{
    /// <summary>This instance's timers; set by the runtime.</summary>
    ITimerScheduler Timers { get; set; }
}
