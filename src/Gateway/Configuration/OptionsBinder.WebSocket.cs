using Courier.Actors.Server;

namespace Courier.Gateway.Configuration;

/// <summary><c>websocket { }</c> (alias <c>ws</c>), as nats-server's parseWebsocket and validateWebsocketOptions.</summary>
internal sealed partial class OptionsBinder
{
    /// <summary><c>websocket { }</c> keys Courier accepts but ignores.</summary>
    private static readonly UnimplementedKeys UnimplementedWebSocket = new(warned: ["advertise"], refused: []);

    private void BindWebSocket(ConfigEntry entry)
    {
        if (entry.Value is not ConfigMap block)
        {
            Error(entry, $"Expected websocket to be a map, got {Describe(entry.Value)}");
            return;
        }

        var ws = _options.WebSocket ??= new WebSocketOptions();
        var errors = _errors.Count;
        foreach (var e in block.Entries)
        {
            switch (e.Key.ToLowerInvariant())
            {
                case "listen":
                    if (TryHostPort(e, out var host, out var port))
                    {
                        ws.Host = host ?? ws.Host;
                        ws.Port = port;
                    }

                    break;
                case "port":
                    if (TryPort(e, out port))
                    {
                        ws.Port = port;
                    }

                    break;
                case "host" or "net":
                    if (TryString(e, out var s))
                    {
                        ws.Host = s;
                    }

                    break;
                case "no_tls":
                    if (TryBool(e, out var b))
                    {
                        ws.NoTls = b;
                    }

                    break;
                case "tls":
                    ws.Tls = LoadTls(e);
                    break;
                case "same_origin":
                    if (TryBool(e, out b))
                    {
                        ws.SameOrigin = b;
                    }

                    break;
                case "allowed_origins" or "allowed_origin" or "allow_origins" or "allow_origin" or "origins" or "origin":
                    BindOrigins(e, ws);
                    break;
                case "handshake_timeout":
                    // An integer is seconds here (no warning), a string a Go duration, as nats-server.
                    if (e.Value is long seconds)
                    {
                        ws.HandshakeTimeout = TimeSpan.FromSeconds(seconds);
                    }
                    else if (TryDuration(e, out var duration))
                    {
                        ws.HandshakeTimeout = duration;
                    }

                    break;
                case "compress" or "compression":
                    if (TryBool(e, out b))
                    {
                        ws.Compression = b;
                    }

                    break;
                case "authorization" or "authentication":
                    if (BindSimpleAuthorization(e, other => Unknown(other, UnimplementedKeys.None)) is { } wsAuth)
                    {
                        (ws.Username, ws.Password, ws.Token, ws.AuthTimeout) = (wsAuth.Username ?? ws.Username, wsAuth.Password ?? ws.Password, wsAuth.Token ?? ws.Token, wsAuth.Timeout ?? ws.AuthTimeout);
                    }

                    break;
                case "jwt_cookie":
                    if (TryString(e, out s))
                    {
                        ws.JwtCookie = s;
                    }

                    break;
                case "no_auth_user":
                    if (TryString(e, out s))
                    {
                        ws.NoAuthUser = s;
                    }

                    break;
                default:
                    Unknown(e, UnimplementedWebSocket);
                    break;
            }
        }

        if (ws.Port == 0)
        {
            return;
        }

        var tlsFailed = _errors.Count > errors;

        // A tls block wins over no_tls (nats-server serves wss when both are set).
        if (ws.Tls is null && !ws.NoTls && !tlsFailed)
        {
            Error(entry, "websocket requires TLS configuration");
        }

        _webSocketEntry = entry;
    }

    private void BindOrigins(ConfigEntry entry, WebSocketOptions ws)
    {
        IEnumerable<object?> values = entry.Value is List<object?> list ? list : [entry.Value];
        foreach (var value in values)
        {
            if (value is not string origin)
            {
                Error(entry, $"error parsing allowed origins: unsupported type {Describe(value)}");
                continue;
            }

            if (!Uri.TryCreate(origin, UriKind.Absolute, out _))
            {
                Error(entry, $"unable to parse allowed origin: {origin}");
                continue;
            }

            ws.AllowedOrigins.Add(origin);
        }
    }

    /// <summary>The checks of validateWebsocketOptions that need the whole file (users may come after the block).</summary>
    private void ValidateWebSocket()
    {
        if (_webSocketEntry is not { } entry || _options.WebSocket is not { } ws)
        {
            return;
        }

        if (ws.NoAuthUser is { } noAuthUser)
        {
            if (_options.Users.Count == 0)
            {
                Error(entry, $"no_auth_user: \"{noAuthUser}\" present, but users are not defined");
            }
            else if (!_options.Users.Exists(u => u.User == noAuthUser))
            {
                Error(entry, $"no_auth_user: \"{noAuthUser}\" not present as user in authorization block or account configuration");
            }
        }

        if (_options.Users.Count > 0 && ws.Username is not null)
        {
            Error(entry, "websocket authentication username not compatible with presence of users/nkeys");
        }

        if (_options.Users.Count > 0 && ws.Token is not null)
        {
            Error(entry, "websocket authentication token not compatible with presence of users/nkeys");
        }

        if (ws.JwtCookie is { } cookie && _options.Operator is not { OperatorJwts.Count: > 0 })
        {
            Error(entry, $"trusted operators or trusted keys configuration is required for JWT authentication via cookie \"{cookie}\"");
        }
    }
}
