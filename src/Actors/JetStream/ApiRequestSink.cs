using System.Buffers;
using System.Text;
using Akka.Actor;
using Courier.Actors.Connections;

namespace Courier.Actors.JetStream;

/// <summary>
/// The API client's subscription to <c>$JS.API.&gt;</c> (or a domain's <c>$JS.&lt;domain&gt;.API.&gt;</c>):
/// a pull request (<c>CONSUMER.MSG.NEXT.&lt;stream&gt;.&lt;consumer&gt;</c>) whose consumer runs on this node
/// goes from the publisher's thread straight to it; every other request is collected and handed to the API
/// actor once per read batch, in order.
/// </summary>
internal sealed class ApiRequestSink(string apiPrefix, ConsumerDirectory consumers, Action<IReadOnlyList<InternalMessage>> handler) : DeliverySink
{
    private readonly byte[] _nextPrefix = Encoding.UTF8.GetBytes(apiPrefix + "CONSUMER.MSG.NEXT.");
    private readonly List<InternalMessage> _batch = [];

    public override void Add(in InProcessMessage frame)
    {
        if (!frame.ReplyTo.IsEmpty
            && frame.Subject.StartsWith(_nextPrefix)
            && consumers.TryGet(frame.Subject[_nextPrefix.Length..], out var consumer))
        {
            var body = frame.Payload.Slice(Math.Max(frame.HeaderSize, 0)).ToArray();
            consumer.Tell(new ConsumerActor.Protocol.Next(Encoding.UTF8.GetString(frame.ReplyTo), body));
            return;
        }

        _batch.Add(InternalMessage.From(frame));
    }

    public override void Complete()
    {
        if (_batch.Count == 0)
        {
            return;
        }

        var batch = _batch.ToArray();
        _batch.Clear();
        handler(batch);
    }
}
