using System.Buffers;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>Deliveries that cross accounts: stream imports' shadow subscriptions and service imports.</summary>
internal sealed partial class Publisher
{
    /// <summary>Service imports one publish may pass through in a chain (nats-server stops cycles; Courier bounds them).</summary>
    private const int MaxImportDepth = 4;

    // A stream import's MSG line parts and the subject mapped into the importer, per thread as the MSG
    // template: [template | plain template | mapped subject], each the template size.
    [ThreadStatic]
    private static byte[]? _threadImportLine;

    // $JS.API.INFO's answer in an account without JetStream (nats-server's NewJSNotEnabledForAccountError).
    private static readonly byte[] JetStreamNotEnabledForAccount =
        "{\"type\":\"io.nats.jetstream.api.v1.account_info_response\",\"error\":{\"code\":503,\"err_code\":10039,\"description\":\"JetStream not enabled for account\"}}"u8.ToArray();

    // Service request and response subscriptions a publish reached: processed after its own deliveries
    // (made at the first: most connections never reach one, and each costs memory per connection).
    private List<Subscription>? _importHits;
    private int _importDepth;

    /// <summary>
    /// A delivery to a subscription that stands for an import. A shadow gets the message with its
    /// subject mapped into the importer (no allocation: the MSG line is formatted in a per-thread
    /// buffer); a service request or response is noted and forwarded after this publish's own deliveries.
    /// </summary>
    private bool DeliverImport(Subscription sub, ImportBinding import, ref MsgTemplates templates, in ReadOnlySequence<byte> payload)
    {
        if (import.Kind != ImportKind.StreamShadow)
        {
            (_importHits ??= []).Add(sub);
            return true;
        }

        var primary = import.Primary!;
        var target = sub.Client;
        var size = _msgTemplateSize;
        var line = _threadImportLine is { } buffer && buffer.Length >= 3 * size ? buffer : _threadImportLine = new byte[3 * size];
        var subjectLength = import.Stream!.MapSubject(templates.Subject, line.AsSpan(2 * size));
        if (subjectLength < 0)
        {
            return false;
        }

        var mapped = new ReadOnlySpan<byte>(line, 2 * size, subjectLength);
        if (import.Filter is { } filter && !SubjectRules.Matches(mapped, filter))
        {
            return false;
        }

        if (target.DeliveryFilter is { } deny && deny.DeniesDelivery(mapped))
        {
            return false;
        }

        var length = (int)payload.Length;
        if (!ProtocolWriter.TryFormatMsgTemplate(line.AsSpan(0, size), mapped, templates.ReplyTo, templates.HeaderSize, length, out var prefixLength, out var suffixLength))
        {
            return false;
        }

        var claim = primary.TryClaimDelivery();
        if (claim < 0)
        {
            return false;
        }

        var shadowed = new MsgTemplates(line, prefixLength, suffixLength, size, mapped, templates.ReplyTo, templates.HeaderSize, length);
        if (!target.WriteMessage(primary, ref shadowed, payload, this))
        {
            return false;
        }

        Delivered(target, primary, claim, templates.ReplyTo);
        return true;
    }

    /// <summary>
    /// Forwards the service requests and responses this publish reached (nats-server's
    /// processServiceImport): a request goes to the exporter with a reply subject of the exporter's
    /// that maps back to the requester; a response goes to the requester's reply subject in its account.
    /// </summary>
    private void ProcessImportHits(ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        var hits = _importHits!.ToArray();
        _importHits.Clear();
        var account = _account;
        foreach (var hit in hits)
        {
            var import = hit.Import!;
            if (import.Kind == ImportKind.ServiceRequest)
            {
                // As nats-server: a request that came over a route was forwarded by the node it was published on.
                if (_kind == PublisherKind.Peer && _importDepth == 0)
                {
                    continue;
                }

                var service = import.Service!;
                var exporter = service.Exporter;
                var reply = replyTo.IsEmpty ? null : exporter.Replies!.Add(account, replyTo, service.ResponseType);
                var to = service.FromIsLiteral ? service.FromUtf8 : subject;
                if (!PublishInAccount(exporter, to, reply, headerSize, payload) && reply is not null)
                {
                    exporter.Replies!.Remove(reply);
                }
            }
            else if (import.Kind == ImportKind.JetStreamDisabled)
            {
                if (!replyTo.IsEmpty)
                {
                    PublishInAccount(account, replyTo, default, -1, new ReadOnlySequence<byte>(JetStreamNotEnabledForAccount));
                }
            }
            else if (import.Responses!.Replies is { } replies && replies.TryTake(subject, out var pending))
            {
                PublishInAccount(pending.Importer, pending.Reply, default, headerSize, payload);
            }
        }
    }

    /// <summary>Delivers a message that crosses into <paramref name="account"/> to its subscribers there (and its routes).</summary>
    private bool PublishInAccount(Account account, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, int headerSize, in ReadOnlySequence<byte> payload)
    {
        if (_importDepth >= MaxImportDepth)
        {
            return false;
        }

        var saved = _account;
        _importDepth++;
        SwitchAccount(account);
        try
        {
            var match = account.Space.Match(subject);
            return !match.IsEmpty && Deliver(match, subject, subject, replyTo, headerSize, payload, default);
        }
        finally
        {
            _importDepth--;
            SwitchAccount(saved);
        }
    }
}
