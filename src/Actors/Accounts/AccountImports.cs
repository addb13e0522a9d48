using System.Text;
using Courier.Actors.Routing;
using Courier.Actors.Server;
using Courier.Protocols.Subjects;

namespace Courier.Actors.Accounts;

/// <summary>
/// A stream import of an account: messages published in <see cref="Exporter"/> on
/// <see cref="From"/> reach the importer's subscribers on <see cref="To"/> (the same subject, a
/// prefixed one, or a mapped one). Each importer subscription that overlaps <see cref="To"/> gets a
/// shadow subscription in the exporter's space (nats-server's addShadowSubscriptions): a delivery to
/// it is one more subscriber in the exporter's match, with the subject rewritten on the MSG line.
/// </summary>
internal sealed class StreamImport
{
    private readonly string[] _fromTokens;
    private readonly string[] _toTokens;

    public StreamImport(Account exporter, string from, string? to, string? prefix)
    {
        Exporter = exporter;
        From = from;
        if (prefix is { Length: > 0 })
        {
            Prefix = prefix.EndsWith('.') ? prefix : prefix + ".";
            To = Prefix + from;
        }
        else
        {
            To = string.IsNullOrEmpty(to) ? from : to;
        }

        _fromTokens = From.Split('.');
        _toTokens = To.Split('.');
        PrefixUtf8 = Prefix is null ? [] : Encoding.UTF8.GetBytes(Prefix);
        ToUtf8 = Encoding.UTF8.GetBytes(To);
        Identity = Prefix is not null || To == From;
        FromIsLiteral = !From.Contains('*') && !From.Contains('>');
    }

    /// <summary>The exporting account.</summary>
    public Account Exporter { get; }

    /// <summary>The subject (pattern) in the exporter.</summary>
    public string From { get; }

    /// <summary>The subject (pattern) in the importer.</summary>
    public string To { get; }

    /// <summary>The prefix with its trailing dot, for <c>prefix</c> imports.</summary>
    public string? Prefix { get; }

    private byte[] PrefixUtf8 { get; }

    private byte[] ToUtf8 { get; }

    // Subjects keep their tokens (prefix or identity): the local subject is prefix + subject.
    private bool Identity { get; }

    private bool FromIsLiteral { get; }

    /// <summary>
    /// The exporter subject a shadow of the importer's subscription to <paramref name="local"/>
    /// listens on, and whether deliveries must be checked against <paramref name="local"/>; null
    /// when the subscription does not overlap the import.
    /// </summary>
    public (string Subject, bool Filter)? ShadowFor(string local)
    {
        if (SubjectRules.IsSubsetOf(local, To))
        {
            // The local subscription is within the import: its exporter-side subject is the local one
            // without the prefix (prefix and identity imports) or the import's own (mapped ones).
            if (Identity)
            {
                return (Prefix is null ? local : local[Prefix.Length..], false);
            }

            return (From, !FromIsLiteral);
        }

        if (SubjectRules.IsSubsetOf(To, local))
        {
            return (From, false);
        }

        return SubjectRules.Collide(local, To) ? (From, true) : null;
    }

    /// <summary>Writes the importer-side subject of a message published on <paramref name="subject"/>; returns its length, or -1 when it does not fit.</summary>
    public int MapSubject(ReadOnlySpan<byte> subject, Span<byte> destination)
    {
        if (Identity)
        {
            if (PrefixUtf8.Length + subject.Length > destination.Length)
            {
                return -1;
            }

            PrefixUtf8.CopyTo(destination);
            subject.CopyTo(destination[PrefixUtf8.Length..]);
            return PrefixUtf8.Length + subject.Length;
        }

        if (FromIsLiteral)
        {
            return ToUtf8.AsSpan().TryCopyTo(destination) ? ToUtf8.Length : -1;
        }

        return MapWildcards(subject, destination);
    }

    // A mapped import with wildcards: the tokens a '*' or '>' of From captured fill the wildcards of To, in order.
    private int MapWildcards(ReadOnlySpan<byte> subject, Span<byte> destination)
    {
        Span<Range> captured = stackalloc Range[16]; // wildcard tokens a mapping can use
        var count = 0;
        var position = 0;
        for (var i = 0; i < _fromTokens.Length && position <= subject.Length; i++)
        {
            var rest = subject[position..];
            var dot = rest.IndexOf((byte)'.');
            var length = dot < 0 ? rest.Length : dot;
            if (_fromTokens[i] == ">")
            {
                if (count < captured.Length)
                {
                    captured[count++] = new Range(position, subject.Length);
                }

                break;
            }

            if (_fromTokens[i] == "*" && count < captured.Length)
            {
                captured[count++] = new Range(position, position + length);
            }

            position += length + 1;
        }

        var p = 0;
        var next = 0;
        for (var i = 0; i < _toTokens.Length; i++)
        {
            if (i > 0)
            {
                if (p >= destination.Length)
                {
                    return -1;
                }

                destination[p++] = (byte)'.';
            }

            var token = _toTokens[i];
            if ((token == "*" || token == ">") && next < count)
            {
                var part = subject[captured[next++]];
                if (!part.TryCopyTo(destination[p..]))
                {
                    return -1;
                }

                p += part.Length;
                continue;
            }

            var written = Encoding.UTF8.GetBytes(token, destination[p..]);
            p += written;
        }

        return p;
    }

    public override string ToString() => $"stream import {Exporter.Name} {From} -> {To}";
}

/// <summary>
/// A service import: requests published in the importer on <see cref="To"/> go to the exporter on
/// <see cref="From"/> with a reply subject of the exporter's (<c>_R_.</c>), whose responses come back
/// to the requester's reply subject (nats-server's processServiceImport).
/// </summary>
internal sealed class ServiceImport(Account exporter, string from, string to, ServiceResponseType responseType)
{
    /// <summary>The exporting account.</summary>
    public Account Exporter { get; } = exporter;

    /// <summary>The service subject in the exporter.</summary>
    public string From { get; } = from;

    /// <summary>The subject requests are published on in the importer.</summary>
    public string To { get; } = to;

    public byte[] FromUtf8 { get; } = Encoding.UTF8.GetBytes(from);

    public bool FromIsLiteral { get; } = !from.Contains('*') && !from.Contains('>');

    /// <summary>How many responses a request may get (the export's <c>response_type</c>).</summary>
    public ServiceResponseType ResponseType { get; } = responseType;

    public override string ToString() => $"service import {Exporter.Name} {From} <- {To}";
}

/// <summary>What a subscription that is not a plain client subscription does with a delivery.</summary>
internal enum ImportKind
{
    /// <summary>A shadow of an importer's subscription in the exporter's space: deliver with the subject mapped.</summary>
    StreamShadow,

    /// <summary>The importer's subscription on a service import's subject: forward the request to the exporter.</summary>
    ServiceRequest,

    /// <summary>The exporter's subscription on its <c>_R_.</c> replies: forward a response to the requester.</summary>
    ServiceResponse,

    /// <summary>An account without JetStream: <c>$JS.API.INFO</c> is answered with "jetstream not enabled for account".</summary>
    JetStreamDisabled,
}

/// <summary>The import a subscription stands for (see <see cref="Subscription.Import"/>).</summary>
internal sealed class ImportBinding
{
    private ImportBinding(ImportKind kind) => Kind = kind;

    public ImportKind Kind { get; }

    /// <summary>For a shadow: its import.</summary>
    public StreamImport? Stream { get; private init; }

    /// <summary>For a shadow: the importer's subscription it shadows (delivery counts and removal go there).</summary>
    public Subscription? Primary { get; private init; }

    /// <summary>For a shadow whose exporter subject is wider than the local one: the local subject (UTF-8) every delivery must match.</summary>
    public byte[]? Filter { get; private init; }

    /// <summary>For a service request subscription: its import.</summary>
    public ServiceImport? Service { get; private init; }

    /// <summary>For a response subscription: the exporter whose pending responses it serves.</summary>
    public Account? Responses { get; private init; }

    public static ImportBinding Shadow(StreamImport import, Subscription primary, bool filter) =>
        new(ImportKind.StreamShadow) { Stream = import, Primary = primary, Filter = filter ? System.Text.Encoding.UTF8.GetBytes(primary.Subject) : null };

    public static ImportBinding Request(ServiceImport import) => new(ImportKind.ServiceRequest) { Service = import };

    public static ImportBinding Response(Account exporter) => new(ImportKind.ServiceResponse) { Responses = exporter };

    public static ImportBinding JetStreamDisabled() => new(ImportKind.JetStreamDisabled);
}
