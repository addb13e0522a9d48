using System.Collections.Concurrent;

namespace Courier.Actors.Runtime.TestKit;

/// <summary>The actor behind a <see cref="TestProbe"/>: queues every message with its sender for the test thread.</summary>
internal sealed class TestActor : ActorBase
{
    private readonly BlockingCollection<ReceivedMessage> _queue;

    public TestActor(BlockingCollection<ReceivedMessage> queue) => _queue = queue;

    protected override bool Receive(object message)
    {
        switch (message)
        {
            case WatchCommand watch:
                Context.Watch(watch.Target);
                watch.Done.TrySetResult();
                break;
            case UnwatchCommand unwatch:
                Context.Unwatch(unwatch.Target);
                unwatch.Done.TrySetResult();
                break;
            default:
                _queue.Add(new ReceivedMessage(message, Sender));
                break;
        }

        return true;
    }

    /// <summary>Makes the test actor watch <paramref name="Target"/>; completes <paramref name="Done"/> once it does.</summary>
    internal sealed record WatchCommand(IActorRef Target, TaskCompletionSource Done);

    /// <summary>Makes the test actor stop watching <paramref name="Target"/>; completes <paramref name="Done"/> once it has.</summary>
    internal sealed record UnwatchCommand(IActorRef Target, TaskCompletionSource Done);
}

/// <summary>A message a <see cref="TestProbe"/> received, with its sender.</summary>
internal readonly record struct ReceivedMessage(object Message, IActorRef Sender);
