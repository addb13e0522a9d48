using System.Buffers;
using System.Net;
using System.Net.Sockets;
using Courier.Actors.Connections;
using Courier.Actors.Server;
using Courier.Protocols.WebSocket;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Listeners;

/// <summary>
/// Accepts NATS clients over WebSocket (<c>websocket { }</c>): runs each connection's HTTP upgrade
/// off the accept loop, bounded by <c>handshake_timeout</c>, then hands the socket and its
/// <see cref="WebSocketStream"/> to the broker, where it is a client connection like any other.
/// </summary>
/// <remarks>
/// The handshake reads and writes a <see cref="Stream"/>: a TLS layer can wrap the accepted socket's
/// stream before the upgrade (wss) without changing anything here.
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
    private readonly CancellationTokenSource _stopping = new(); // ends handshakes still running at stop

    public WebSocketListener(Broker broker, WebSocketOptions options, ILogger log)
    {
        _broker = broker;
        _options = options;
        _log = log;
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
        Log.Listening(_log, $"ws://{_options.Host}:{LocalEndPoint.Port}");
        Log.NoTls(_log);
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

                var result = WebSocketHandshake.Evaluate(request!, _policy, tls: false, earlyData: consumed < filled);
                if (!result.Accepted)
                {
                    await RefuseAsync(socket, stream, result, remote).ConfigureAwait(false);
                    return;
                }

                if (result.Kind != WebSocketKind.Client)
                {
                    // MQTT over WebSocket and leaf nodes are not served on this listener yet.
                    Log.KindNotServed(_log, remote, result.Kind.ToString());
                    Close(socket, stream);
                    return;
                }

                await stream.WriteAsync(result.Response, deadline.Token).ConfigureAwait(false);
                _broker.AcceptWebSocket(socket, new WebSocketStream(stream, socket, result, _maxMessage));
                return;
            }
        }
        catch (Exception e) when (e is OperationCanceledException or IOException or SocketException or ObjectDisposedException)
        {
            if (!_stopping.IsCancellationRequested)
            {
                Log.HandshakeFailed(_log, remote, e is OperationCanceledException ? "i/o timeout" : e.Message);
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

        [LoggerMessage(Level = LogLevel.Error, Message = "{Remote} - websocket {Kind} connections are not served by this listener")]
        public static partial void KindNotServed(ILogger logger, string remote, string kind);
    }
}
