from django.shortcuts import render


def program_list(request):
    return render(request, "program/program_list.html", {"programs": []})
