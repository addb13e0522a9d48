using System.Collections.Concurrent;
using System.Diagnostics;

namespace Courier.Actors.Runtime.TestKit;

/// <summary>
/// A scripted participant for actor tests (Akka.NET <c>TestProbe</c>): an actor (<see cref="Ref"/>) that
/// queues what it receives, and blocking expectations over that queue, each with a timeout. Failed
/// expectations throw <see cref="TestKitAssertionException"/>. Use a probe from one test thread.
/// </summary>
public sealed class TestProbe
{
    private readonly BlockingCollection<ReceivedMessage> _queue = [];

    /// <summary>Creates a probe whose actor is a top-level actor of <paramref name="system"/>.</summary>
    /// <param name="system">The system.</param>
    /// <param name="defaultTimeout">Used when an expectation gives none; 3 s if null.</param>
    /// <param name="name">The actor's name; generated if null.</param>
    public TestProbe(ActorSystem system, TimeSpan? defaultTimeout = null, string? name = null)
    {
        ArgumentNullException.ThrowIfNull(system);
        Sys = system;
        DefaultTimeout = defaultTimeout ?? TestKitBase.DefaultTimeoutValue;
        LastSender = system.DeadLetters;
        Ref = system.ActorOf(Props.Create(() => new TestActor(_queue)), name);
    }

    /// <summary>The probe's actor: give it as a sender, a watcher or a subscriber.</summary>
    public IActorRef Ref { get; }

    /// <summary>The system the probe lives in.</summary>
    public ActorSystem Sys { get; }

    /// <summary>The timeout of expectations that give none.</summary>
    public TimeSpan DefaultTimeout { get; }

    /// <summary>The sender of the last message an expectation took.</summary>
    public IActorRef LastSender { get; private set; }

    /// <summary>True if a message is waiting.</summary>
    public bool HasMessages => _queue.Count > 0;

    /// <summary>Tells <paramref name="message"/> to the probe's actor.</summary>
    public void Tell(object message, IActorRef? sender = null) => Ref.Tell(message, sender);

    /// <summary>Sends <paramref name="message"/> to <paramref name="target"/> with the probe as sender.</summary>
    public void Send(IActorRef target, object message)
    {
        ArgumentNullException.ThrowIfNull(target);
        target.Tell(message, Ref);
    }

    /// <summary>Sends <paramref name="message"/> to <paramref name="target"/> with <see cref="LastSender"/> as sender.</summary>
    public void Forward(IActorRef target, object message)
    {
        ArgumentNullException.ThrowIfNull(target);
        target.Tell(message, LastSender);
    }

    /// <summary>Replies to <see cref="LastSender"/> with the probe as sender.</summary>
    public void Reply(object message) => LastSender.Tell(message, Ref);

    /// <summary>
    /// Makes the probe watch <paramref name="target"/> and returns once the watch is registered, so a stop
    /// requested afterwards is seen with <see cref="Terminated.ExistenceConfirmed"/> true.
    /// </summary>
    public IActorRef Watch(IActorRef target)
    {
        ArgumentNullException.ThrowIfNull(target);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Ref.Tell(new TestActor.WatchCommand(target, done), null);
        AwaitDone(done.Task, $"watching {target}");
        return target;
    }

    /// <summary>Stops watching <paramref name="target"/>; returns once done (a queued <see cref="Terminated"/> is then dropped).</summary>
    public IActorRef Unwatch(IActorRef target)
    {
        ArgumentNullException.ThrowIfNull(target);
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Ref.Tell(new TestActor.UnwatchCommand(target, done), null);
        AwaitDone(done.Task, $"unwatching {target}");
        return target;
    }

    /// <summary>The next message, which must be a <typeparamref name="T"/>, within the timeout.</summary>
    public T ExpectMsg<T>(TimeSpan? timeout = null)
    {
        var max = timeout ?? DefaultTimeout;
        var received = Take(max, $"a message of type {typeof(T).Name}");
        return received.Message is T typed
            ? typed
            : throw new TestKitAssertionException(
                $"Expected a message of type {typeof(T).Name} but received {Describe(received)}.");
    }

    /// <summary>The next message, which must be a <typeparamref name="T"/> matching <paramref name="predicate"/>.</summary>
    public T ExpectMsg<T>(Func<T, bool> predicate, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        var message = ExpectMsg<T>(timeout);
        return predicate(message)
            ? message
            : throw new TestKitAssertionException(
                $"The message {message} of type {typeof(T).Name} did not match the predicate.");
    }

    /// <summary>The next message, which must equal <paramref name="expected"/>.</summary>
    public T ExpectMsg<T>(T expected, TimeSpan? timeout = null)
    {
        var message = ExpectMsg<T>(timeout);
        return EqualityComparer<T>.Default.Equals(message, expected)
            ? message
            : throw new TestKitAssertionException($"Expected <{expected}> but received <{message}>.");
    }

    /// <summary>Asserts that no message arrives for <paramref name="duration"/>.</summary>
    public void ExpectNoMsg(TimeSpan duration)
    {
        if (_queue.TryTake(out var received, duration))
        {
            LastSender = received.Sender;
            throw new TestKitAssertionException(
                $"Expected no message for {duration.TotalMilliseconds:0} ms but received {Describe(received)}.");
        }
    }

    /// <summary>The next message, which must be <see cref="Terminated"/> for <paramref name="target"/> (watch it first).</summary>
    public Terminated ExpectTerminated(IActorRef target, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(target);
        var terminated = ExpectMsg<Terminated>(timeout);
        return ReferenceEquals(terminated.ActorRef, target)
            ? terminated
            : throw new TestKitAssertionException($"Expected Terminated for {target} but got one for {terminated.ActorRef}.");
    }

    /// <summary>Skips messages until one matches <paramref name="isMessage"/>, and returns it.</summary>
    public object FishForMessage(Func<object, bool> isMessage, TimeSpan? max = null) =>
        FishForMessage<object>(isMessage, max);

    /// <summary>Skips messages until a <typeparamref name="T"/> matches <paramref name="isMessage"/>, and returns it.</summary>
    public T FishForMessage<T>(Func<T, bool> isMessage, TimeSpan? max = null)
    {
        ArgumentNullException.ThrowIfNull(isMessage);
        var budget = max ?? DefaultTimeout;
        var start = Stopwatch.GetTimestamp();
        while (true)
        {
            var left = budget - Stopwatch.GetElapsedTime(start);
            var received = Take(left < TimeSpan.Zero ? TimeSpan.Zero : left, $"a {typeof(T).Name} matching the predicate");
            if (received.Message is T typed && isMessage(typed))
            {
                return typed;
            }
        }
    }

    /// <summary>The next message, whatever it is.</summary>
    public object ReceiveOne(TimeSpan? max = null) => Take(max ?? DefaultTimeout, "a message").Message;

    /// <summary>The next <paramref name="count"/> messages, all within <paramref name="max"/>.</summary>
    public IReadOnlyList<object> ReceiveN(int count, TimeSpan? max = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        var budget = max ?? DefaultTimeout;
        var start = Stopwatch.GetTimestamp();
        var messages = new List<object>(count);
        while (messages.Count < count)
        {
            var left = budget - Stopwatch.GetElapsedTime(start);
            messages.Add(Take(left < TimeSpan.Zero ? TimeSpan.Zero : left, $"message {messages.Count + 1} of {count}").Message);
        }

        return messages;
    }

    private static string Describe(ReceivedMessage received) =>
        $"<{received.Message}> of type {received.Message.GetType().Name} from {received.Sender}";

    private void AwaitDone(Task done, string what)
    {
        if (!done.Wait(DefaultTimeout))
        {
            throw new TestKitAssertionException($"Timeout ({DefaultTimeout.TotalMilliseconds:0} ms) while {what}.");
        }
    }

    private ReceivedMessage Take(TimeSpan timeout, string what)
    {
        if (!_queue.TryTake(out var received, timeout))
        {
            throw new TestKitAssertionException($"Timeout ({timeout.TotalMilliseconds:0} ms) while waiting for {what}.");
        }

        LastSender = received.Sender;
        return received;
    }
}
