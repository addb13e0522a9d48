using System.Globalization;
using System.Text;
using Courier.Actors.Connections;
using Courier.Protocols.JetStream;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.JetStream;

/// <summary>
/// <c>republish</c> (nats-server processJetStreamMsg): each stored message whose subject matches
/// <c>src</c> is published again on the mapped <c>dest</c> subject, with Nats-Stream, Nats-Subject,
/// Nats-Sequence and Nats-Last-Sequence (the subject's previous sequence, 0 for its first message)
/// headers, and with only the headers and Nats-Msg-Size under <c>headers_only</c>. Published after the
/// batch is durable and before its PubAcks, as nats-server sends it before the PubAck.
/// </summary>
internal sealed partial class StreamActor
{
    private readonly string? _domain;
    private readonly ApiCounters _counters;
    private SubjectTransform? _republish;
    private readonly List<(string Subject, byte[] Headers, byte[] Payload)> _republishing = [];

    /// <summary>The stream's 2.10 <c>subject_transform</c>, applied to a published or sourced subject before anything else (null: none).</summary>
    private SubjectTransform? _ingest;

    private static SubjectTransform? IngestTransform(StreamConfig config) =>
        config.SubjectTransform is { Destination.Length: > 0 } transform ? SubjectTransform.TryCreate(string.IsNullOrEmpty(transform.Source) ? ">" : transform.Source, transform.Destination) : null;

    /// <summary>The message with its subject mapped by <c>subject_transform</c> when it matches.</summary>
    private InternalMessage Ingested(InternalMessage m) =>
        _ingest?.Apply(m.Subject) is { } mapped ? m with { Subject = mapped } : m;

    private static SubjectTransform? RePublisher(StreamConfig config) =>
        config.RePublish is { Destination.Length: > 0 } republish ? SubjectTransform.TryCreate(republish.Source is { Length: > 0 } source ? source : ">", republish.Destination) : null;

    /// <summary>Where <paramref name="subject"/> is republished (null: it is not), and that subject's last sequence before this message.</summary>
    private (string? To, ulong LastSequence) RepublishTarget(string subject)
    {
        if (_republish?.Apply(subject) is not { } to)
        {
            return (null, 0);
        }

        var state = _store.FilteredState(0, subject);
        return (to, state.Msgs == 0 ? 0 : state.Last);
    }

    private void QueueRepublish(string to, InternalMessage m, ulong sequence, ulong lastSequence)
    {
        var headersOnly = _config.RePublish?.HeadersOnly == true;
        byte[] headers;
        if (m.Headers is not { Length: > 0 } original)
        {
            var text = new StringBuilder("NATS/1.0\r\n")
                .Append(CultureInfo.InvariantCulture, $"Nats-Stream: {_config.Name}\r\nNats-Subject: {m.Subject}\r\nNats-Sequence: {sequence}\r\nNats-Last-Sequence: {lastSequence}\r\n");
            if (headersOnly)
            {
                text.Append(CultureInfo.InvariantCulture, $"Nats-Msg-Size: {m.Payload.Length}\r\n");
            }

            headers = Encoding.UTF8.GetBytes(text.Append("\r\n").ToString());
        }
        else
        {
            headers = NatsHeaders.Set(original, "Nats-Stream", _config.Name);
            headers = NatsHeaders.Set(headers, "Nats-Subject", m.Subject);
            headers = NatsHeaders.Set(headers, "Nats-Sequence", sequence.ToString(CultureInfo.InvariantCulture));
            headers = NatsHeaders.Set(headers, "Nats-Last-Sequence", lastSequence.ToString(CultureInfo.InvariantCulture));
            if (headersOnly)
            {
                headers = NatsHeaders.Set(headers, "Nats-Msg-Size", m.Payload.Length.ToString(CultureInfo.InvariantCulture));
            }
        }

        _republishing.Add((to, headers, headersOnly ? [] : m.Payload));
    }

    /// <summary>Publishes what the flushed batches republish (they are durable now).</summary>
    private void SendRepublished()
    {
        foreach (var (subject, headers, payload) in _republishing)
        {
            _echoOut.Publish(subject, null, headers, payload); // another stream of the account may store it, as on nats-server
        }

        _republishing.Clear();
    }
}
