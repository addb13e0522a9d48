using System.Text;
using Courier.Protocols.WebSocket;
using Xunit;

namespace Courier.Protocols.Tests.WebSocket;

/// <summary>
/// Feeds client bytes to fresh frame readers every way a socket could deliver them (whole, byte by
/// byte, split at every position) through a buffer as a transport keeps one, and checks each
/// delivery decodes to the same events: whole messages, control frames, or the error that ends it.
/// </summary>
internal static class FrameFeeds
{
    private const int BufferSize = 256; // bytes: the transport's read buffer in these tests

    public static void AssertEveryFeeding(Func<WebSocketFrameReader> create, byte[] input, params string[] expected)
    {
        var whole = Run(create(), [input]);
        Assert.Equal(expected, whole);
        var byteByByte = Run(create(), input.Select(b => new[] { b }).ToArray());
        Assert.Equal(expected, byteByByte);
        for (var i = 0; i <= input.Length; i++)
        {
            var split = Run(create(), [input[..i], input[i..]]);
            Assert.True(expected.SequenceEqual(split), $"split at {i}: [{string.Join(", ", split)}]");
        }
    }

    /// <summary>Events as text: <c>msg:payload</c>, <c>ping:payload</c>, <c>close:payload-hex</c>, <c>error:status:reason</c>.</summary>
    public static List<string> Run(WebSocketFrameReader reader, IEnumerable<byte[]> arrivals)
    {
        var events = new List<string>();
        var buffer = new byte[BufferSize];
        var buffered = 0;
        var message = new List<byte>();
        foreach (var arrival in arrivals)
        {
            var offset = 0;
            while (offset < arrival.Length)
            {
                var take = Math.Min(arrival.Length - offset, buffer.Length - buffered);
                arrival.AsSpan(offset, take).CopyTo(buffer.AsSpan(buffered));
                buffered += take;
                offset += take;
                while (true)
                {
                    var status = reader.Read(buffer.AsSpan(0, buffered), out var consumed, out var frame);
                    if (status == WebSocketReadStatus.NeedMoreData)
                    {
                        Assert.Equal(0, consumed);
                        break;
                    }

                    if (status == WebSocketReadStatus.Error)
                    {
                        events.Add($"error:{frame.CloseStatus}:{frame.Error}");
                        return events;
                    }

                    var payload = buffer.AsSpan(frame.Offset, frame.Length);
                    if (status == WebSocketReadStatus.Control)
                    {
                        events.Add($"{frame.Opcode.ToString().ToLowerInvariant()}:{Encoding.Latin1.GetString(payload)}");
                    }
                    else
                    {
                        message.AddRange(payload.ToArray());
                        if (frame.EndOfMessage)
                        {
                            events.Add((frame.Compressed ? "zmsg:" : "msg:") + Encoding.Latin1.GetString([.. message]));
                            message.Clear();
                        }
                    }

                    buffer.AsSpan(consumed, buffered - consumed).CopyTo(buffer);
                    buffered -= consumed;
                    if (buffered == 0 && status == WebSocketReadStatus.Data && frame.Length == 0 && !frame.EndOfMessage)
                    {
                        break;
                    }
                }
            }
        }

        return events;
    }
}
