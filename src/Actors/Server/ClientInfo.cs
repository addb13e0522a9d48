using System.Buffers.Text;
using System.Text;
using System.Text.Json;
using Courier.Actors.Connections;
using Courier.Protocols.Nats;

namespace Courier.Actors.Server;

/// <summary>
/// The INFO clients get: the node's fields, formatted once into JSON and again only when one changes
/// (the listen port, <c>connect_urls</c>, <c>auth_required</c> on reload); each client's INFO adds its
/// id, address and nonce in place, with no per-connection serialization.
/// </summary>
internal sealed class ClientInfo
{
    private readonly ServerInfo _info;
    private readonly bool _webSocketAuthOverride;
    private byte[]? _json;
    private byte[]? _webSocketJson;

    public ClientInfo(ServerInfo info, WebSocketOptions? webSocket)
    {
        _info = info;
        _webSocketAuthOverride = webSocket is { AuthOverride: true };
    }

    /// <summary>The client port INFO names.</summary>
    public int Port => _info.Port;

    /// <summary>The <c>connect_urls</c> INFO carries now; null until a route has set them.</summary>
    public IReadOnlyList<string>? ConnectUrls => _info.ConnectUrls;

    public void SetPort(int port)
    {
        _info.Port = port;
        Changed();
    }

    /// <summary>After a reload: whether INFO asks for a client certificate (<c>tls_verify</c>).</summary>
    public void SetTlsVerify(bool verify)
    {
        _info.TlsVerify = verify;
        Changed();
    }

    /// <summary>After a reload: the <c>max_payload</c> INFO announces.</summary>
    public void SetMaxPayload(int maxPayload)
    {
        _info.MaxPayload = maxPayload;
        Changed();
    }

    /// <summary>After a reload: whether clients must log in (no_auth_user turns it off in INFO, as nats-server).</summary>
    public void SetAuthRequired(bool required)
    {
        _info.AuthRequired = required;
        Changed();
    }

    /// <summary>Sets <c>connect_urls</c>; false when they are what INFO already carries.</summary>
    public bool TrySetConnectUrls(List<string> urls)
    {
        if (_info.ConnectUrls is { } current && current.SequenceEqual(urls))
        {
            return false;
        }

        _info.ConnectUrls = urls;
        Changed();
        return true;
    }

    /// <summary>
    /// <c>INFO {json}\r\n</c> for one client into <paramref name="destination"/>: the node's JSON with the
    /// client's id, address and nonce added. Returns the length, or -1 when it does not fit.
    /// </summary>
    public int Format(Span<byte> destination, ulong clientId, string? clientIp, bool webSocket = false, string? nonce = null)
    {
        var json = webSocket && _webSocketAuthOverride && !_info.AuthRequired
            ? _webSocketJson ??= WebSocketJson()
            : _json ??= JsonSerializer.SerializeToUtf8Bytes(_info, NatsJsonContext.Default.ServerInfo);
        var p = 0;
        if (!Append(destination, ref p, "INFO "u8) || !Append(destination, ref p, json.AsSpan(0, json.Length - 1)) ||
            !Append(destination, ref p, ",\"client_id\":"u8) ||
            !Utf8Formatter.TryFormat(clientId, destination[p..], out var written))
        {
            return -1;
        }

        p += written;
        if (!string.IsNullOrEmpty(clientIp))
        {
            if (!Append(destination, ref p, ",\"client_ip\":\""u8) || destination.Length - p < clientIp.Length + 1)
            {
                return -1;
            }

            p += Encoding.ASCII.GetBytes(clientIp, destination[p..]); // an IP address: ASCII, nothing to escape
            destination[p++] = (byte)'"';
        }

        if (nonce is not null)
        {
            // Raw URL-safe base64: ASCII, nothing to escape.
            if (!Append(destination, ref p, ",\"nonce\":\""u8) || destination.Length - p < nonce.Length + 1)
            {
                return -1;
            }

            p += Encoding.ASCII.GetBytes(nonce, destination[p..]);
            destination[p++] = (byte)'"';
        }

        return Append(destination, ref p, "}\r\n"u8) ? p : -1;
    }

    /// <summary>A client's INFO as an object (the rare INFO too long to format in place).</summary>
    public ServerInfo Create(ClientConnection client)
    {
        var info = Create(client.Id, client.RemoteIp);
        info.AuthRequired |= client.IsWebSocket && _webSocketAuthOverride;
        info.Nonce = client.Nonce;
        return info;
    }

    public ServerInfo Create(ulong clientId, string? clientIp)
    {
        var info = _info.Clone();
        info.ClientId = clientId;
        info.ClientIp = string.IsNullOrEmpty(clientIp) ? null : clientIp;
        return info;
    }

    // Formatted again on the next INFO.
    private void Changed()
    {
        _json = null;
        _webSocketJson = null;
    }

    /// <summary>INFO for WebSocket clients when only the websocket block asks for authorization (nats-server's authOverride).</summary>
    private byte[] WebSocketJson()
    {
        var info = _info.Clone();
        info.AuthRequired = true;
        return JsonSerializer.SerializeToUtf8Bytes(info, NatsJsonContext.Default.ServerInfo);
    }

    private static bool Append(Span<byte> destination, ref int position, ReadOnlySpan<byte> bytes)
    {
        if (!bytes.TryCopyTo(destination[position..]))
        {
            return false;
        }

        position += bytes.Length;
        return true;
    }
}
