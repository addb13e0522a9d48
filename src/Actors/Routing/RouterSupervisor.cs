using System.Collections.Immutable;
using Akka.Actor;
using Courier.Actors.Accounts;
using Courier.Actors.Server;

namespace Courier.Actors.Routing;

/// <summary>
/// Parent of one account's <see cref="SubjectRouter"/> shards: a shard that fails (or is killed) is
/// restarted and rebuilds itself from the connections' registrations.
/// </summary>
internal sealed class RouterSupervisor : ReceiveActor
{
    /// <summary>Restarts allowed per shard per minute before it is stopped for good.</summary>
    private const int MaxRestartsPerMinute = 100;

    public RouterSupervisor(Account account, ClientRegistry registry)
    {
        var shards = ImmutableArray.CreateBuilder<IActorRef>(account.Space.ShardCount);
        for (var i = 0; i < account.Space.ShardCount; i++)
        {
            shards.Add(Context.ActorOf(SubjectRouter.Props(account, registry, i), $"shard-{i}"));
        }

        var ready = new Protocol.ShardsReady(shards.MoveToImmutable());
        Receive<Protocol.AwaitShards>(_ => Sender.Tell(ready));
    }

    public static Props Props(Account account, ClientRegistry registry) =>
        Akka.Actor.Props.Create(() => new RouterSupervisor(account, registry));

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

        /// <summary>Every shard has been created: their refs, by shard index.</summary>
        public sealed class ShardsReady
        {
            public ShardsReady(ImmutableArray<IActorRef> shards) => Shards = shards;

            public ImmutableArray<IActorRef> Shards { get; }

            public override string ToString() => $"ShardsReady({Shards.Length})";
        }
    }
}
