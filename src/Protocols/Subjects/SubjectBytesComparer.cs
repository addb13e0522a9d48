namespace Courier.Protocols.Subjects;

/// <summary>
/// Compares subjects (and other UTF-8 names) kept as byte arrays by content, and looks them up by
/// span, so the publish path and the stores find a key without making a string or an array.
/// </summary>
public sealed class SubjectBytesComparer : IEqualityComparer<byte[]>, IAlternateEqualityComparer<ReadOnlySpan<byte>, byte[]>
{
    public static readonly SubjectBytesComparer Instance = new();

    public bool Equals(byte[]? x, byte[]? y) => ReferenceEquals(x, y) || (x is not null && y is not null && x.AsSpan().SequenceEqual(y));

    public int GetHashCode(byte[] obj) => Hash(obj);

    public bool Equals(ReadOnlySpan<byte> alternate, byte[] other) => alternate.SequenceEqual(other);

    public int GetHashCode(ReadOnlySpan<byte> alternate) => Hash(alternate);

    public byte[] Create(ReadOnlySpan<byte> alternate) => alternate.ToArray();

    private static int Hash(ReadOnlySpan<byte> bytes)
    {
        var h = default(HashCode);
        h.AddBytes(bytes);
        return h.ToHashCode();
    }
}
