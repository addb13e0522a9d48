namespace Courier.Actors.Runtime.Internal;

/// <summary>
/// A timer tick as queued in the owner's mailbox (Akka's <c>TimerScheduler.TimerMsg</c>). The owner delivers
/// <see cref="Message"/> only if the timer with <see cref="Key"/> still has <see cref="Generation"/>: a tick of
/// a cancelled or restarted timer that was already queued is dropped.
/// </summary>
internal sealed class TimerMsg(object key, int generation, TimerScheduler owner, object message)
{
    public object Key { get; } = key;

    public int Generation { get; } = generation;

    public TimerScheduler Owner { get; } = owner;

    public object Message { get; } = message;

    public override string ToString() => $"TimerMsg({Key}, #{Generation}, {Message})";
}
