using Courier.Actors.Runtime;
using Courier.Actors.Server;

namespace Courier.Actors.Routing;

/// <summary>
/// Parent of the node's <see cref="SubjectRouter"/> shards: a shard that fails (or is killed) is
/// restarted and rebuilds itself from the connections' registrations.
/// </summary>
internal sealed class RouterSupervisor : ReceiveActor
{
    /// <summary>Restarts allowed per shard per minute before it is stopped for good.</summary>
    private const int MaxRestartsPerMinute = 100;

    public RouterSupervisor(Broker broker, IActorRef[] shards)
    {
        for (var i = 0; i < shards.Length; i++)
        {
            shards[i] = Context.ActorOf(SubjectRouter.Props(broker, i), $"shard-{i}");
        }

        // Answered after the constructor, so the asker sees every shard's ref.
        Receive<Protocol.AwaitShards>(_ => Sender.Tell(Protocol.ShardsReady.Instance));
    }

    public static Props Props(Broker broker, IActorRef[] shards) => Runtime.Props.Create(() => new RouterSupervisor(broker, shards));

    protected override SupervisorStrategy SupervisorStrategy() =>
        new OneForOneStrategy(MaxRestartsPerMinute, TimeSpan.FromMinutes(1), _ => Directive.Restart);

    /// <summary>The messages this actor understands.</summary>
    public static class Protocol
    {
        /// <summary>Asks for <see cref="ShardsReady"/> once the shard refs exist.</summary>
        public sealed class AwaitShards
        {
            public static readonly AwaitShards Instance = new();

            private AwaitShards()
            {
            }
        }

        /// <summary>Every shard has been created.</summary>
        public sealed class ShardsReady
        {
            public static readonly ShardsReady Instance = new();

            private ShardsReady()
            {
            }
        }
    }
}
