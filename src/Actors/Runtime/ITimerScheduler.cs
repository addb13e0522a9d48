namespace Courier.Actors.Runtime;

/// <summary>
/// An actor's keyed timers (Akka.NET <c>ITimerScheduler</c>). Use only on the actor's own turn. Starting a
/// timer with a key in use replaces it; all timers are cancelled when the actor stops or restarts. A tick that
/// was already queued when its timer was cancelled or replaced is not delivered.
/// </summary>
public interface ITimerScheduler
{
    /// <summary>Sends <paramref name="msg"/> to the actor once, after <paramref name="timeout"/>.</summary>
    void StartSingleTimer(object key, object msg, TimeSpan timeout);

    /// <summary>Sends <paramref name="msg"/> to the actor every <paramref name="interval"/>.</summary>
    void StartPeriodicTimer(object key, object msg, TimeSpan interval);

    /// <summary>Sends <paramref name="msg"/> after <paramref name="initialDelay"/>, then every <paramref name="interval"/>.</summary>
    void StartPeriodicTimer(object key, object msg, TimeSpan initialDelay, TimeSpan interval);

    /// <summary>True if a timer with <paramref name="key"/> is running (a single timer until it is delivered).</summary>
    bool IsTimerActive(object key);

    /// <summary>Cancels the timer with <paramref name="key"/>, if any.</summary>
    void Cancel(object key);

    /// <summary>Cancels every timer.</summary>
    void CancelAll();
}
