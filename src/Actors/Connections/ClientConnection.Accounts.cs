using System.Buffers;
using Courier.Actors.Accounts;
using Courier.Actors.Routing;
using Courier.Protocols.Nats;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Connections;

/// <summary>A client's account: binding it at CONNECT, and deliveries that cross accounts through imports.</summary>
internal sealed partial class ClientConnection
{
    /// <summary>Service imports one publish may pass through in a chain (nats-server stops cycles; Courier bounds them).</summary>
    private const int MaxImportDepth = 4;

    // The subject and MSG line of a delivery through a stream import, per thread as the MSG template.
    [ThreadStatic]
    private static byte[]? _threadImportLine;

    // $JS.API.INFO's answer in an account without JetStream (nats-server's NewJSNotEnabledForAccountError).
    private static readonly byte[] JetStreamNotEnabledForAccount =
        "{\"type\":\"io.nats.jetstream.api.v1.account_info_response\",\"error\":{\"code\":503,\"err_code\":10039,\"description\":\"JetStream not enabled for account\"}}"u8.ToArray();

    // Service request and response subscriptions a publish reached: processed after its own deliveries.
    private readonly List<Subscription> _importHits = [];
    private int _importDepth;

    /// <summary>
    /// Moves the client into its account, once, at CONNECT. Subscriptions made before CONNECT (allowed
    /// without authorization) live in the global account, which is then also the client's.
    /// </summary>
    internal void BindAccount(Account account)
    {
        if (ReferenceEquals(account, _account))
        {
            return;
        }

        lock (_subsLock)
        {
            if (_subs.Count > 0 || _pendingChanges.Count > 0)
            {
                return;
            }
        }

        SwitchAccount(account);
    }

    // The one-entry match cache was for the other account's space.
    private void SwitchAccount(Account account)
    {
        _account = account;
        _lastSubjectVersion = -1;
    }

    /// <summary>
    /// Adds a subscription of the account's own client (<see cref="Account.ImportClient"/>): a service
    /// import's subject, or the account's <c>_R_.</c> replies. Returns the change to apply.
    /// </summary>
    internal SubChange AddImportSubscription(string subject, ImportBinding binding)
    {
        var subjectBytes = System.Text.Encoding.UTF8.GetBytes(subject);
        var sid = System.Text.Encoding.UTF8.GetBytes($"{binding.Kind} {subject}");
        var sub = new Subscription(this, _account, subject, null, sid, _account.Space.ShardForSubscription(subjectBytes)) { Import = binding };
        lock (_subsLock)
        {
            _subs[sub.SidKey] = sub;
        }

        return new SubChange(sub, Add: true);
    }

    /// <summary>Gives a new subscription its shadows in the exporters of the streams its account imports.</summary>
    private void AddShadows(Subscription sub)
    {
        List<Subscription>? shadows = null;
        foreach (var import in _account.StreamImports)
        {
            if (import.ShadowFor(sub.Subject) is not { } shadow)
            {
                continue;
            }

            var exporter = import.Exporter;
            var subjectBytes = System.Text.Encoding.UTF8.GetBytes(shadow.Subject);
            (shadows ??= []).Add(new Subscription(this, exporter, shadow.Subject, sub.Queue, sub.Sid, exporter.Space.ShardForSubscription(subjectBytes))
            {
                Import = ImportBinding.Shadow(import, sub, shadow.Filter),
            });
        }

        if (shadows is null)
        {
            return;
        }

        sub.Shadows = [.. shadows];
        foreach (var shadow in shadows)
        {
            _pendingChanges.Add(new SubChange(shadow, Add: true));
        }
    }

    /// <summary>
    /// A delivery to a subscription that stands for an import. A shadow gets the message with its
    /// subject mapped into the importer (no allocation: the MSG line is formatted in a per-thread
    /// buffer); a service request or response is noted and forwarded after this publish's own deliveries.
    /// </summary>
    private bool DeliverImport(Subscription sub, ImportBinding import, ref Templates templates, in ReadOnlySequence<byte> payload)
    {
        if (import.Kind != ImportKind.StreamShadow)
        {
            _importHits.Add(sub);
            return true;
        }

        var primary = import.Primary!;
        var target = sub.Client;
        var line = _threadImportLine is { } buffer && buffer.Length >= 2 * _msgTemplateSize ? buffer : _threadImportLine = new byte[2 * _msgTemplateSize];
        var subjectLength = import.Stream!.MapSubject(templates.Subject, line.AsSpan(_msgTemplateSize));
        if (subjectLength < 0)
        {
            return false;
        }

        var mapped = new ReadOnlySpan<byte>(line, _msgTemplateSize, subjectLength);
        if (import.Filter is { } filter && !SubjectRules.Matches(mapped, filter))
        {
            return false;
        }

        if (target.DeliveryFilter is { } deny && deny.DeniesDelivery(mapped))
        {
            return false;
        }

        var claim = primary.TryClaimDelivery();
        if (claim < 0)
        {
            return false;
        }

        bool written;
        if (target._mqtt is not null)
        {
            written = target.WriteMqttDelivery(primary, mapped, templates.HeaderSize, payload, _mqtt?.InboundQoS ?? 0, _mqtt?.InboundRetain == true);
        }
        else if (primary.Direct is { } direct)
        {
            written = DeliverDirect(target, direct, mapped, templates.ReplyTo, templates.HeaderSize, payload);
        }
        else
        {
            var plain = templates.HeaderSize > 0 && !target._headers;
            var headerSize = plain ? -1 : templates.HeaderSize;
            var body = plain ? payload.Slice(templates.HeaderSize) : payload;
            if (!ProtocolWriter.TryFormatMsgTemplate(line.AsSpan(0, _msgTemplateSize), mapped, templates.ReplyTo, headerSize, (int)body.Length, out var prefixLength, out var suffixLength))
            {
                return false;
            }

            written = target.Outbound.WriteMsg(line.AsSpan(0, prefixLength), primary.Sid, line.AsSpan(prefixLength, suffixLength), body);
        }

        if (!written)
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
        var hits = _importHits.ToArray();
        _importHits.Clear();
        var account = _account;
        foreach (var hit in hits)
        {
            var import = hit.Import!;
            if (import.Kind == ImportKind.ServiceRequest)
            {
                // As nats-server: a request that came over a route was forwarded by the node it was published on.
                if (_route is not null && _importDepth == 0)
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
            return !match.IsEmpty && DeliverMatch(match, subject, subject, replyTo, headerSize, payload, default);
        }
        finally
        {
            _importDepth--;
            SwitchAccount(saved);
        }
    }
}
