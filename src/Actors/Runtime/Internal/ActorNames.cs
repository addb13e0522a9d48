namespace Courier.Actors.Runtime.Internal;

/// <summary>Actor name rules and generated names, as Akka's (<c>ActorPath.ElementRegex</c>, <c>$a</c>, <c>$b</c>...).</summary>
internal static class ActorNames
{
    // Akka's base64 alphabet for generated names: "$a", "$b", ... "$~", "$ab", ...
    private const string Base64Chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+~";

    // Characters Akka allows in a path element besides letters and digits.
    private const string AllowedPunctuation = "-_:@&=+,.!~*'$;%";

    public static string Generated(long number)
    {
        Span<char> buffer = stackalloc char[12]; // '$' + at most 11 base64 digits for a positive long
        var length = 0;
        buffer[length++] = '$';
        do
        {
            buffer[length++] = Base64Chars[(int)(number & 63)];
            number >>= 6;
        }
        while (number != 0);

        return new string(buffer[..length]);
    }

    public static void Validate(string name)
    {
        if (name.Length == 0)
        {
            throw new InvalidActorNameException("Actor name must not be empty.");
        }

        if (name[0] == '$')
        {
            throw new InvalidActorNameException($"Actor name [{name}] must not start with '$' (reserved for generated names).");
        }

        foreach (var c in name)
        {
            if (!char.IsAsciiLetterOrDigit(c) && !AllowedPunctuation.Contains(c))
            {
                throw new InvalidActorNameException(
                    $"Actor name [{name}] contains '{c}'; allowed are ASCII letters, digits and {AllowedPunctuation}.");
            }
        }
    }
}
