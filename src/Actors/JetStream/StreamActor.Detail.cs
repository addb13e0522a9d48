using Akka.Actor;
using Courier.Protocols.JetStream;

namespace Courier.Actors.JetStream;

/// <summary>
/// The stream's part of /jsz's stream details: its info and its consumers' actors, taken in one
/// turn so the consumer list matches the info's <c>consumer_count</c>. The consumers' infos are
/// asked off this actor by whoever gathers the details.
/// </summary>
internal sealed partial class StreamActor
{
    private void OnGetDetail()
    {
        if (_replication is not { } replication)
        {
            Sender.Tell(new Protocol.Detail(Info(""), [.. _consumers.Actors]));
            return;
        }

        // A replicated stream's detail has its cluster block (leader, replicas), as STREAM.INFO's.
        var asker = Sender;
        var self = Self;
        replication.Host.Ask<Raft.RaftHost.Protocol.GroupStatus>(new Raft.RaftHost.Protocol.GetGroupStatus(replication.Group), TimeSpan.FromSeconds(2))
            .PipeTo(self, success: status => new Protocol.DetailWithStatus(asker, status), failure: _ => new Protocol.DetailWithStatus(asker, null));
    }

    private void OnDetailWithStatus(Protocol.DetailWithStatus m)
    {
        var info = Info("");
        if (m.Status is { } status)
        {
            info.Cluster = ClusterInfoOf(status);
        }

        m.Asker.Tell(new Protocol.Detail(info, [.. _consumers.Actors]));
    }

    public static partial class Protocol
    {
        /// <summary>Asks for a <see cref="Detail"/> (/jsz with <c>streams=true</c>).</summary>
        public sealed class GetDetail
        {
            public static readonly GetDetail Instance = new();

            private GetDetail()
            {
            }
        }

        /// <summary>A replicated stream's detail, once its group's status is in.</summary>
        public sealed record DetailWithStatus(IActorRef Asker, Raft.RaftHost.Protocol.GroupStatus? Status);

        /// <summary>The stream's info and its (public) consumers' actors.</summary>
        public sealed class Detail
        {
            public Detail(StreamInfoResponse info, IReadOnlyList<IActorRef> consumers)
            {
                ArgumentNullException.ThrowIfNull(info);
                ArgumentNullException.ThrowIfNull(consumers);
                Info = info;
                Consumers = consumers;
            }

            public StreamInfoResponse Info { get; }

            public IReadOnlyList<IActorRef> Consumers { get; }

            public override string ToString() => $"Detail({Info.Config?.Name}, {Consumers.Count} consumers)";
        }
    }
}
