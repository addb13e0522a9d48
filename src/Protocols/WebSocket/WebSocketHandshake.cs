namespace Courier.Protocols.WebSocket;

/// <summary>
/// Decides an upgrade request as nats-server's <c>wsUpgrade</c> does, in its order (RFC 6455
/// §4.2.1): GET; a Host; <c>Upgrade: websocket</c>; <c>Connection: Upgrade</c>; a key; version 13;
/// the origin. Then the negotiated options: permessage-deflate when configured and offered,
/// <c>Nats-No-Masking</c>, the JWT cookie. <c>Sec-WebSocket-Protocol</c> offers are not answered
/// (nats-server has no subprotocol for NATS), except that the MQTT path answers <c>mqtt</c>.
/// </summary>
internal static class WebSocketHandshake
{
    private const string LeafPath = "/leafnode";
    private const string MqttPath = "/mqtt";

    /// <param name="request">The parsed request head.</param>
    /// <param name="policy">The listener's options.</param>
    /// <param name="tls">The connection is TLS (for same_origin's default port).</param>
    /// <param name="earlyData">The client sent bytes after the head before the answer.</param>
    public static WebSocketUpgradeResult Evaluate(WebSocketHandshakeRequest request, WebSocketUpgradePolicy policy, bool tls, bool earlyData)
    {
        if (request.Method != "GET")
        {
            return WebSocketUpgradeResult.Refuse(405, "request method must be GET");
        }

        if (string.IsNullOrEmpty(request.Get("Host")))
        {
            return WebSocketUpgradeResult.Refuse(400, "'Host' missing in request");
        }

        if (!request.HasToken("Upgrade", "websocket"))
        {
            return WebSocketUpgradeResult.Refuse(400, "invalid value for header 'Upgrade'");
        }

        if (!request.HasToken("Connection", "Upgrade"))
        {
            return WebSocketUpgradeResult.Refuse(400, "invalid value for header 'Connection'");
        }

        var key = request.Get("Sec-WebSocket-Key");
        if (string.IsNullOrEmpty(key))
        {
            return WebSocketUpgradeResult.Refuse(400, "key missing");
        }

        if (!request.HasToken("Sec-WebSocket-Version", "13"))
        {
            return WebSocketUpgradeResult.Refuse(400, "invalid version");
        }

        if (policy.Origins.Check(request, tls) is { } originError)
        {
            return WebSocketUpgradeResult.Refuse(403, $"origin not allowed: {originError}");
        }

        if (earlyData)
        {
            return WebSocketUpgradeResult.Refuse(400, "client sent data before handshake is complete");
        }

        var compress = policy.Compression && OffersPerMessageDeflate(request);
        var kind = request.Target.StartsWith(LeafPath, StringComparison.Ordinal) ? WebSocketKind.Leaf
            : request.Target.StartsWith(MqttPath, StringComparison.Ordinal) ? WebSocketKind.Mqtt
            : WebSocketKind.Client;
        var cookie = kind != WebSocketKind.Leaf && policy.JwtCookie is { Length: > 0 } name ? Cookie(request, name) : null;
        return WebSocketUpgradeResult.Accept(request, key, kind, compress, cookie);
    }

    /// <summary>Any <c>Sec-WebSocket-Extensions</c> value offers <c>permessage-deflate</c> (RFC 7692).</summary>
    public static bool OffersPerMessageDeflate(WebSocketHandshakeRequest request)
    {
        foreach (var list in request.GetAll("Sec-WebSocket-Extensions"))
        {
            foreach (var extension in list.Split(','))
            {
                foreach (var parameter in extension.Split(';'))
                {
                    if (string.Equals(parameter.Trim(' ', '\t'), "permessage-deflate", StringComparison.OrdinalIgnoreCase))
                    {
                        return true;
                    }
                }
            }
        }

        return false;
    }

    /// <summary>The value of cookie <paramref name="name"/> in the <c>Cookie</c> headers, or null.</summary>
    public static string? Cookie(WebSocketHandshakeRequest request, string name)
    {
        foreach (var header in request.GetAll("Cookie"))
        {
            foreach (var pair in header.Split(';'))
            {
                var trimmed = pair.Trim();
                var equals = trimmed.IndexOf('=', StringComparison.Ordinal);
                if (equals > 0 && trimmed.AsSpan(0, equals).SequenceEqual(name))
                {
                    var value = trimmed[(equals + 1)..];
                    return value.Length >= 2 && value[0] == '"' && value[^1] == '"' ? value[1..^1] : value;
                }
            }
        }

        return null;
    }
}
