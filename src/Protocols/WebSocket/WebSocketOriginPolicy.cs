namespace Courier.Protocols.WebSocket;

/// <summary>
/// The <c>same_origin</c> and <c>allowed_origins</c> checks of nats-server's <c>checkOrigin</c>: a
/// request without an <c>Origin</c> (or <c>Sec-WebSocket-Origin</c>) header is always accepted (RFC
/// 6455 §10.2: a non-browser client can send any origin); otherwise the origin's host and port must
/// equal the request's <c>Host</c> (same_origin), and its scheme, host and port one allowed entry.
/// </summary>
internal sealed class WebSocketOriginPolicy
{
    private readonly Dictionary<string, (string Scheme, string Port)> _allowed = new(StringComparer.Ordinal);

    /// <param name="sameOrigin"><c>same_origin</c>.</param>
    /// <param name="allowedOrigins"><c>allowed_origins</c>: URLs such as <c>https://example.com:8443</c>.</param>
    public WebSocketOriginPolicy(bool sameOrigin, IEnumerable<string> allowedOrigins)
    {
        SameOrigin = sameOrigin;
        foreach (var origin in allowedOrigins)
        {
            if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri))
            {
                throw new ArgumentException($"unable to parse allowed origin: {origin}", nameof(allowedOrigins));
            }

            var (host, port) = HostAndPort(uri.Scheme == "https", Authority(origin));
            _allowed[host] = (uri.Scheme, port);
        }
    }

    public bool SameOrigin { get; }

    /// <summary>True when neither check is configured (every origin is accepted).</summary>
    public bool AcceptsAny => !SameOrigin && _allowed.Count == 0;

    /// <summary>Null when the request's origin is accepted, else nats-server's reason.</summary>
    public string? Check(WebSocketHandshakeRequest request, bool tls)
    {
        if (AcceptsAny)
        {
            return null;
        }

        var origin = request.Get("Origin");
        if (string.IsNullOrEmpty(origin))
        {
            origin = request.Get("Sec-WebSocket-Origin");
        }

        if (string.IsNullOrEmpty(origin))
        {
            return null;
        }

        if (!Uri.TryCreate(origin, UriKind.Absolute, out var uri))
        {
            return $"parse \"{origin}\": invalid URI for request";
        }

        var scheme = uri.Scheme;
        var (originHost, originPort) = HostAndPort(scheme == "https", Authority(origin));
        if (SameOrigin)
        {
            var (requestHost, requestPort) = HostAndPort(tls, request.Get("Host") ?? "");
            if (originHost != requestHost || originPort != requestPort)
            {
                return "not same origin";
            }
        }

        if (_allowed.Count > 0 && (!_allowed.TryGetValue(originHost, out var allowed) || allowed.Scheme != scheme || allowed.Port != originPort))
        {
            return "not in the allowed list";
        }

        return null;
    }

    /// <summary>The <c>host[:port]</c> part of a URL, as written (Uri would drop a default port).</summary>
    private static string Authority(string url)
    {
        var start = url.IndexOf("://", StringComparison.Ordinal);
        var rest = start < 0 ? url : url[(start + 3)..];
        var end = rest.IndexOfAny(['/', '?', '#']);
        return end < 0 ? rest : rest[..end];
    }

    /// <summary>Lower-cased host and port; the scheme's default port when none is written (Go's wsGetHostAndPort).</summary>
    private static (string Host, string Port) HostAndPort(bool tls, string hostPort)
    {
        string host;
        string? port = null;
        if (hostPort.StartsWith('['))
        {
            var close = hostPort.IndexOf(']', StringComparison.Ordinal);
            host = close < 0 ? hostPort : hostPort[1..close];
            if (close >= 0 && close + 1 < hostPort.Length && hostPort[close + 1] == ':')
            {
                port = hostPort[(close + 2)..];
            }
        }
        else
        {
            var colon = hostPort.LastIndexOf(':');
            host = colon < 0 ? hostPort : hostPort[..colon];
            port = colon < 0 ? null : hostPort[(colon + 1)..];
        }

        return (host.ToLowerInvariant(), port ?? (tls ? "443" : "80"));
    }
}
