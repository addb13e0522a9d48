using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Protocols.WebSocket;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Listeners;

/// <summary>
/// Accepts NATS clients over WebSocket (<c>websocket { }</c>), and MQTT clients on its <c>/mqtt</c> path: runs each connection's HTTP upgrade
/// off the accept loop, bounded by <c>handshake_timeout</c>, then hands the socket and its
/// <see cref="WebSocketStream"/> to the broker, where it is a client connection like any other.
/// </summary>
/// <remarks>
/// With a <c>tls { }</c> block (wss) the TLS handshake comes first, on the same task and within the same
/// <c>handshake_timeout</c>, then the upgrade over the <see cref="SslStream"/>: as nats-server's TLS
/// listener under its HTTP server. Nothing here runs on an actor's thread or a client's pump.
/// </remarks>
internal sealed partial class WebSocketListener : IAsyncDisposable
{
    private const int HandshakeReadSize = 4096; // bytes per read of the request head
    private const int MaxLingerReads = 256; // reads of at most 1 KB drained after an error answer

    private static readonly TimeSpan LingerTimeout = TimeSpan.FromSeconds(1); // after an error answer

    private readonly Broker _broker;
    private readonly WebSocketOptions _options;
    private readonly WebSocketUpgradePolicy _policy;
    private readonly int _maxMessage;
    private readonly ILogger _log;
    private readonly TcpAcceptor _acceptor;
    private readonly TlsTransport? _tls;
    private readonly CancellationTokenSource _stopping = new(); // ends handshakes still running at stop

    public WebSocketListener(Broker broker, WebSocketOptions options, ILogger log)
    {
        _broker = broker;
        _options = options;
        _log = log;
        _tls = options.Tls is { } tls ? new TlsTransport(tls) : null;
        _policy = new WebSocketUpgradePolicy(options.Compression, new WebSocketOriginPolicy(options.SameOrigin, options.AllowedOrigins), options.JwtCookie);
        // Bytes: a frame (or compressed message) may carry at most a client's whole pending allowance,
        // so a huge declared length is refused from its header; PUB sizes are the NATS parser's check.
        _maxMessage = (int)Math.Min(int.MaxValue - 64, Math.Max(broker.Options.MaxPending, broker.Options.MaxPayload + (2L * broker.Options.MaxControlLine)));
        // Each upgrade runs off the accept loop, so a slow handshake never holds up the next accept.
        _acceptor = new TcpAcceptor(options.Host, options.Port, socket => _ = Task.Run(() => UpgradeAsync(socket)), error => Log.AcceptError(log, error));
    }

    /// <summary>Where it listens (the actual port when -1 asked for a random one).</summary>
    public IPEndPoint LocalEndPoint => _acceptor.LocalEndPoint;

    public void Start()
    {
        _acceptor.Start();
        Log.Listening(_log, $"{(_tls is null ? "ws" : "wss")}://{_options.Host}:{LocalEndPoint.Port}");
        if (_tls is null)
        {
            Log.NoTls(_log);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stopping.CancelAsync().ConfigureAwait(false);
        await _acceptor.DisposeAsync().ConfigureAwait(false);
        _stopping.Dispose();
    }

    private async Task UpgradeAsync(Socket socket)
    {
        var remote = socket.RemoteEndPoint?.ToString() ?? "?";
        var timeout = _options.HandshakeTimeout is { } t && t > TimeSpan.Zero ? t : WebSocketOptions.DefaultHandshakeTimeout;
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
        deadline.CancelAfter(timeout);
        Stream stream = new NetworkStream(socket, ownsSocket: false);
        var buffer = ArrayPool<byte>.Shared.Rent(HandshakeReadSize);
        var filled = 0;
        try
        {
            if (_tls is not null)
            {
                try
                {
                    if (await LooksLikeHttpAsync(socket, deadline.Token).ConfigureAwait(false))
                    {
                        // Go's HTTP server answers plain HTTP on its TLS port this way, and logs nothing.
                        await RefuseRawAsync(socket, stream, HttpOnTlsPort).ConfigureAwait(false);
                        return;
                    }

                    stream = await _tls.AuthenticateAsync(stream, deadline.Token).ConfigureAwait(false);
                }
                catch (Exception e) when (e is AuthenticationException or TimeoutException or OperationCanceledException or IOException or SocketException)
                {
                    // handshake_timeout bounds the TLS handshake too (Go's HTTP server read deadline).
                    if (!_stopping.IsCancellationRequested)
                    {
                        Log.TlsHandshakeError(_log, remote, e is TimeoutException or OperationCanceledException ? "i/o timeout" : Reason(e));
                    }

                    Close(socket, stream);
                    return;
                }
            }

            while (true)
            {
                if (filled == buffer.Length)
                {
                    var bigger = ArrayPool<byte>.Shared.Rent(buffer.Length * 2);
                    buffer.AsSpan(0, filled).CopyTo(bigger);
                    ArrayPool<byte>.Shared.Return(buffer);
                    buffer = bigger;
                }

                var read = await stream.ReadAsync(buffer.AsMemory(filled), deadline.Token).ConfigureAwait(false);
                if (read == 0)
                {
                    Close(socket, stream);
                    return;
                }

                filled += read;
                var status = WebSocketHandshakeParser.TryParse(new ReadOnlySequence<byte>(buffer, 0, filled), WebSocketHandshakeParser.DefaultMaxHeadSize, out var request, out var consumed);
                switch (status)
                {
                    case HandshakeParseStatus.NeedMoreData:
                        continue;
                    case HandshakeParseStatus.TooLarge:
                        await RefuseAsync(socket, stream, WebSocketUpgradeResult.Refuse(431, "request head too large"), remote).ConfigureAwait(false);
                        return;
                    case HandshakeParseStatus.Malformed:
                        await RefuseAsync(socket, stream, WebSocketUpgradeResult.Refuse(400, "malformed HTTP request"), remote).ConfigureAwait(false);
                        return;
                }

                var result = WebSocketHandshake.Evaluate(request!, _policy, tls: _tls is not null, earlyData: consumed < filled);
                if (!result.Accepted)
                {
                    await RefuseAsync(socket, stream, result, remote).ConfigureAwait(false);
                    return;
                }

                if (result.Kind == WebSocketKind.Leaf || (result.Kind == WebSocketKind.Mqtt && _broker.Options.Mqtt is null))
                {
                    // Leaf nodes are not served; MQTT over WebSocket needs the mqtt { } block (its sessions, JetStream).
                    Log.KindNotServed(_log, remote, result.Kind.ToString());
                    Close(socket, stream);
                    return;
                }

                await stream.WriteAsync(result.Response, deadline.Token).ConfigureAwait(false);

                // Over TLS the frames are written to the SslStream, not gathered on the socket.
                var webSocket = new WebSocketStream(stream, _tls is null ? socket : null, result, _maxMessage);
                if (result.Kind == WebSocketKind.Mqtt)
                {
                    // nats-server serves MQTT on the websocket listener's /mqtt path: an MQTT client
                    // like one of the MQTT port, its packets in binary frames.
                    _broker.AcceptMqttWebSocket(socket, webSocket);
                }
                else
                {
                    _broker.AcceptWebSocket(socket, webSocket);
                }

                return;
            }
        }
        catch (Exception e) when (e is OperationCanceledException or TimeoutException or IOException or SocketException or ObjectDisposedException)
        {
            if (!_stopping.IsCancellationRequested)
            {
                Log.HandshakeFailed(_log, remote, e is OperationCanceledException or TimeoutException ? "i/o timeout" : e.Message);
            }

            Close(socket, stream);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private async Task RefuseAsync(Socket socket, Stream stream, WebSocketUpgradeResult result, string remote)
    {
        Log.HandshakeError(_log, remote, result.Reason);
        try
        {
            await stream.WriteAsync(result.Response).ConfigureAwait(false);
            socket.Shutdown(SocketShutdown.Send);

            // Lingering close: read what the client still sends (bounded), so closing with unread
            // bytes does not reset the connection before the client has read the answer.
            using var linger = new CancellationTokenSource(LingerTimeout);
            var sink = new byte[1024];
            for (var i = 0; i < MaxLingerReads && await stream.ReadAsync(sink, linger.Token).ConfigureAwait(false) > 0; i++)
            {
            }
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException or OperationCanceledException)
        {
        }

        Close(socket, stream);
    }

    /// <summary>Go's answer to plain HTTP on a TLS port (net/http's tlsRecordHeaderLooksLikeHTTP).</summary>
    private static readonly byte[] HttpOnTlsPort = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"u8.ToArray();

    /// <summary>
    /// Peeks at the first bytes, without consuming them, for an HTTP request where a TLS record should
    /// start (Go's check: <c>GET /</c>, <c>HEAD </c>, <c>POST </c>, <c>PUT /</c>, <c>OPTIO</c>).
    /// </summary>
    private static async Task<bool> LooksLikeHttpAsync(Socket socket, CancellationToken cancellationToken)
    {
        var head = new byte[5]; // bytes: a TLS record header
        var read = await socket.ReceiveAsync(head, SocketFlags.Peek, cancellationToken).ConfigureAwait(false);
        if (read < head.Length)
        {
            return false; // a TLS ClientHello's first segment always holds its 5-byte record header
        }

        ReadOnlySpan<byte> h = head;
        return h.SequenceEqual("GET /"u8) || h.SequenceEqual("HEAD "u8) || h.SequenceEqual("POST "u8) || h.SequenceEqual("PUT /"u8) || h.SequenceEqual("OPTIO"u8);
    }

    private static async Task RefuseRawAsync(Socket socket, Stream stream, byte[] answer)
    {
        try
        {
            // Take the request's bytes first: closing with them unread would reset the connection
            // before the client reads the answer.
            var sink = new byte[4096];
            _ = await stream.ReadAsync(sink).ConfigureAwait(false);
            await stream.WriteAsync(answer).ConfigureAwait(false);
            socket.Shutdown(SocketShutdown.Send);
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException)
        {
        }

        Close(socket, stream);
    }

    // The innermost message says what went wrong (e.g. "client didn't provide a certificate").
    private static string Reason(Exception e)
    {
        while (e.InnerException is { } inner)
        {
            e = inner;
        }

        return e.Message;
    }

    private static void Close(Socket socket, Stream stream)
    {
        stream.Dispose();
        socket.Dispose();
    }

    private static partial class Log
    {
        [LoggerMessage(Level = LogLevel.Information, Message = "Listening for websocket clients on {Url}")]
        public static partial void Listening(ILogger logger, string url);

        [LoggerMessage(Level = LogLevel.Warning, Message = "Websocket not configured with TLS. DO NOT USE IN PRODUCTION!")]
        public static partial void NoTls(ILogger logger);

        [LoggerMessage(Level = LogLevel.Error, Message = "Error accepting websocket connection: {Error}")]
        public static partial void AcceptError(ILogger logger, string error);

        [LoggerMessage(Level = LogLevel.Error, Message = "{Remote} - websocket handshake error: {Reason}")]
        public static partial void HandshakeError(ILogger logger, string remote, string reason);

        [LoggerMessage(Level = LogLevel.Error, Message = "{Remote} - websocket handshake failed: {Reason}")]
        public static partial void HandshakeFailed(ILogger logger, string remote, string reason);

        // nats-server logs its HTTP server's line with the listener's prefix.
        [LoggerMessage(Level = LogLevel.Error, Message = "websocket: TLS handshake error from {Remote}: {Reason}")]
        public static partial void TlsHandshakeError(ILogger logger, string remote, string reason);

        [LoggerMessage(Level = LogLevel.Error, Message = "{Remote} - websocket {Kind} connections are not served by this listener")]
        public static partial void KindNotServed(ILogger logger, string remote, string kind);
    }
}
