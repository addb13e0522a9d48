using System.Formats.Asn1;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Courier.Actors.Server;

/// <summary>
/// <c>verify_and_map</c>: which configured user a client certificate names, in nats-server's order
/// (auth.go checkClientTLSCertSubject): an email SAN, then a DNS SAN, then a URI SAN matching a user
/// name literally; then the subject as RFC 2253 text (<c>CN=alice,O=Acme</c>, most specific first, as
/// Go prints it); then a user name that is a DN with the same attributes in another order.
/// </summary>
internal static class CertificateUserMap
{
    private const string SubjectAltNameOid = "2.5.29.17";

    /// <summary>Go's short names for attribute types (crypto/x509/pkix attributeTypeNames); others print as the OID.</summary>
    private static readonly Dictionary<string, string> AttributeNames = new()
    {
        ["2.5.4.6"] = "C",
        ["2.5.4.10"] = "O",
        ["2.5.4.11"] = "OU",
        ["2.5.4.3"] = "CN",
        ["2.5.4.5"] = "SERIALNUMBER",
        ["2.5.4.7"] = "L",
        ["2.5.4.8"] = "ST",
        ["2.5.4.9"] = "STREET",
        ["2.5.4.17"] = "POSTALCODE",
    };

    /// <summary>The user <paramref name="certificate"/> maps to, or null.</summary>
    public static UserEntry? Find(X509Certificate2 certificate, IReadOnlyList<UserEntry> users)
    {
        var (emails, dnsNames, uris) = AlternativeNames(certificate);
        foreach (var names in (List<string>[])[emails, dnsNames, uris])
        {
            foreach (var name in names)
            {
                if (FindByName(users, name) is { } user)
                {
                    return user;
                }
            }
        }

        var attributes = SubjectAttributes(certificate.SubjectName);
        if (FindByName(users, Format(attributes)) is { } bySubject)
        {
            return bySubject;
        }

        // A DN written in another order, or with other spacing: the same attributes, each once.
        var wanted = Normalize(attributes.SelectMany(rdn => rdn));
        foreach (var user in users)
        {
            if (user.User.Contains('=', StringComparison.Ordinal) && ParseDn(user.User) is { } parsed && Normalize(parsed).SequenceEqual(wanted))
            {
                return user;
            }
        }

        return null;
    }

    /// <summary>The subject as Go's <c>pkix.RDNSequence.String()</c>: last RDN first, <c>+</c> inside an RDN.</summary>
    public static string Format(IReadOnlyList<List<(string Type, string Value)>> rdns)
    {
        var text = new StringBuilder();
        for (var i = rdns.Count - 1; i >= 0; i--)
        {
            if (text.Length > 0)
            {
                text.Append(',');
            }

            for (var j = 0; j < rdns[i].Count; j++)
            {
                if (j > 0)
                {
                    text.Append('+');
                }

                var (type, value) = rdns[i][j];
                text.Append(type).Append('=');
                Escape(text, value);
            }
        }

        return text.ToString();
    }

    /// <summary>The subject's RDNs in encoded order (most general first), each a list of type/value pairs.</summary>
    public static List<List<(string Type, string Value)>> SubjectAttributes(X500DistinguishedName name)
    {
        var rdns = new List<List<(string, string)>>();
        try
        {
            var sequence = new AsnReader(name.RawData, AsnEncodingRules.DER).ReadSequence();
            while (sequence.HasData)
            {
                var set = sequence.ReadSetOf();
                var rdn = new List<(string, string)>();
                while (set.HasData)
                {
                    var pair = set.ReadSequence();
                    var oid = pair.ReadObjectIdentifier();
                    var type = AttributeNames.TryGetValue(oid, out var shortName) ? shortName : oid;
                    rdn.Add((type, ReadValue(pair)));
                }

                rdns.Add(rdn);
            }
        }
        catch (AsnContentException)
        {
            rdns.Clear();
        }

        return rdns;
    }

    private static string ReadValue(AsnReader pair)
    {
        var tag = pair.PeekTag();
        if (tag.TagClass == TagClass.Universal)
        {
            switch ((UniversalTagNumber)tag.TagValue)
            {
                case UniversalTagNumber.UTF8String or UniversalTagNumber.PrintableString or UniversalTagNumber.IA5String
                    or UniversalTagNumber.T61String or UniversalTagNumber.BMPString or UniversalTagNumber.UniversalString
                    or UniversalTagNumber.NumericString or UniversalTagNumber.VisibleString:
                    return pair.ReadCharacterString((UniversalTagNumber)tag.TagValue);
            }
        }

        return "#" + Convert.ToHexStringLower(pair.ReadEncodedValue().Span);
    }

    private static UserEntry? FindByName(IReadOnlyList<UserEntry> users, string name)
    {
        foreach (var user in users)
        {
            if (user.User == name)
            {
                return user;
            }
        }

        return null;
    }

    private static (List<string> Emails, List<string> DnsNames, List<string> Uris) AlternativeNames(X509Certificate2 certificate)
    {
        List<string> emails = [], dnsNames = [], uris = [];
        if (certificate.Extensions[SubjectAltNameOid] is not { } extension)
        {
            return (emails, dnsNames, uris);
        }

        try
        {
            var names = new AsnReader(extension.RawData, AsnEncodingRules.DER).ReadSequence();
            while (names.HasData)
            {
                var tag = names.PeekTag();
                // GeneralName: rfc822Name [1], dNSName [2], uniformResourceIdentifier [6] (RFC 5280 4.2.1.6)
                var list = tag.TagClass != TagClass.ContextSpecific ? null : tag.TagValue switch
                {
                    1 => emails,
                    2 => dnsNames,
                    6 => uris,
                    _ => null,
                };
                if (list is null)
                {
                    names.ReadEncodedValue();
                    continue;
                }

                list.Add(names.ReadCharacterString(UniversalTagNumber.IA5String, tag));
            }
        }
        catch (AsnContentException)
        {
            // A malformed SAN names nobody; the subject may still.
        }

        return (emails, dnsNames, uris);
    }

    /// <summary>Go's RFC 2253 escaping (pkix AttributeTypeAndValue): specials, and a leading '#' or space or trailing space.</summary>
    private static void Escape(StringBuilder text, string value)
    {
        for (var i = 0; i < value.Length; i++)
        {
            var c = value[i];
            if (c is ',' or '+' or '"' or '\\' or '<' or '>' or ';' || (i == 0 && c is ' ' or '#') || (i == value.Length - 1 && c == ' '))
            {
                text.Append('\\');
            }

            text.Append(c);
        }
    }

    /// <summary>A DN as written in a config (<c>CN=alice, O=Acme</c>): its type/value pairs, or null when it is not one.</summary>
    private static List<(string Type, string Value)>? ParseDn(string dn)
    {
        var pairs = new List<(string, string)>();
        var current = new StringBuilder();
        string? type = null;
        for (var i = 0; i <= dn.Length; i++)
        {
            var end = i == dn.Length;
            var c = end ? ',' : dn[i];
            if (!end && c == '\\' && i + 1 < dn.Length)
            {
                current.Append(dn[++i]);
            }
            else if (type is null && c == '=')
            {
                type = current.ToString().Trim();
                current.Clear();
            }
            else if (c is ',' or '+' or ';')
            {
                if (type is null || type.Length == 0)
                {
                    return null;
                }

                pairs.Add((type, current.ToString().Trim()));
                type = null;
                current.Clear();
            }
            else
            {
                current.Append(c);
            }
        }

        return pairs;
    }

    private static List<string> Normalize(IEnumerable<(string Type, string Value)> pairs) =>
        pairs.Select(p => $"{p.Type.ToUpperInvariant()}={p.Value}").Order(StringComparer.Ordinal).ToList();
}
