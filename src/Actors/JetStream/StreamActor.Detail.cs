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
    private void OnGetDetail() => Sender.Tell(new Protocol.Detail(Info(""), [.. _consumers.Actors]));

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
